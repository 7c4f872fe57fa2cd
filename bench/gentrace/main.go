// Command gentrace writes long or hostile execspec traces to standard
// output, for the memory and time measurements of bench/hostile.sh.
//
//	go run ./bench/gentrace -events 10000000 > long.jsonl     a conforming fifo trace with call/ret ticks
//	go run ./bench/gentrace -spawn 4194305 > tasks.jsonl      that many tasks spawned onto the global queue
//	go run ./bench/gentrace -partial 1000000 > tokio.jsonl    a conforming partially observed tokio-style trace (internal/partialgen)
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/execspec/execspec/internal/partialgen"
	"github.com/execspec/execspec/traces"
)

func main() {
	events := flag.Int("events", 0, "a conforming trace of about this many events: each task spawned, taken, polled once to Ready")
	spawn := flag.Int("spawn", 0, "a trace that spawns this many tasks and does nothing else")
	partial := flag.Int("partial", 0, "a conforming partially observed trace (unobserved take, queue, outcome) of a tokio-style executor on 4 workers, about this many events")
	tasks := flag.Int("tasks", 0, "with -events: only this many tasks, each polled to Pending and woken again and again, then to Ready (0: a new task for every four events)")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer w.Flush()
	if *partial > 0 {
		writePartial(w, *partial)
		return
	}
	fmt.Fprintln(w, `{"format":"execspec-trace","version":1,"executor":"gentrace","workers":1,"policy":"fifo"}`)
	var b []byte
	seq := uint64(0)
	line := func(task int64, rest string) {
		seq++
		b = append(b[:0], `{"seq":`...)
		b = strconv.AppendUint(b, seq, 10)
		b = append(b, rest[:len(rest)-1]...)
		b = append(b, `,"task":`...)
		b = strconv.AppendInt(b, task, 10)
		b = append(b, `,"call":`...)
		b = strconv.AppendUint(b, seq, 10)
		b = append(b, `,"ret":`...)
		b = strconv.AppendUint(b, seq, 10)
		b = append(b, "}\n"...)
		w.Write(b)
	}
	for t := int64(1); t <= int64(*spawn); t++ {
		line(t, `,"kind":"spawn","queue":"global"}`)
	}
	if *tasks > 0 {
		k := int64(*tasks)
		for t := int64(1); t <= k; t++ {
			line(t, `,"kind":"spawn","queue":"global"}`)
		}
		t := int64(1)
		for ; int(seq) < *events-int(4*k); t = t%k + 1 {
			line(t, `,"kind":"take","worker":0,"source":"global"}`)
			line(t, `,"kind":"poll-begin","worker":0}`)
			line(t, `,"kind":"poll-end","worker":0,"result":"pending"}`)
			line(t, `,"kind":"wake","outcome":"scheduled","queue":"global"}`)
		}
		for range k {
			line(t, `,"kind":"take","worker":0,"source":"global"}`)
			line(t, `,"kind":"poll-begin","worker":0}`)
			line(t, `,"kind":"poll-end","worker":0,"result":"ready"}`)
			t = t%k + 1
		}
		return
	}
	for t := int64(1); int(seq) < *events; t++ {
		line(t, `,"kind":"spawn","queue":"global"}`)
		line(t, `,"kind":"take","worker":0,"source":"global"}`)
		line(t, `,"kind":"poll-begin","worker":0}`)
		line(t, `,"kind":"poll-end","worker":0,"result":"ready"}`)
	}
}

// writePartial writes a partialgen trace of about n events on 4 workers.
func writePartial(out io.Writer, n int) {
	w, err := traces.NewWriter(out, partialgen.Header(4))
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(1)
	}
	partialgen.Generate(partialgen.Options{Workers: 4, Live: 512, Events: n, Seed: 1}, func(e traces.Event) {
		if err == nil {
			err = w.Write(e)
		}
	})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(1)
	}
}
