// Command gentrace writes long or hostile execspec traces to standard
// output, for the memory and time measurements of bench/hostile.sh.
//
//	go run ./bench/gentrace -events 10000000 > long.jsonl     a conforming fifo trace with call/ret ticks
//	go run ./bench/gentrace -spawn 4194305 > tasks.jsonl      that many tasks spawned onto the global queue
//	go run ./bench/gentrace -partial 1000000 > tokio.jsonl    a conforming partially observed tokio-style trace (internal/partialgen)
//	go run ./bench/gentrace -priority 100000 -aging 2         that many tasks queued at once under the priority policy, taken in the order the policy picks
//	go run ./bench/gentrace -intervals 200000                 that many pushes, every one overlapping every other (order intervals), taken in reverse
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
	priority := flag.Int("priority", 0, "a conforming v1.1 trace of the priority policy: this many tasks of distinct priorities spawned onto the global queue, then taken in the policy's order and polled to Ready")
	aging := flag.Int("aging", 0, "with -priority: the aging (0: none)")
	intervals := flag.Int("intervals", 0, "a conforming order-intervals trace: this many pushes onto the global queue, each overlapping every other, then taken in reverse")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer w.Flush()
	switch {
	case *partial > 0:
		writePartial(w, *partial)
		return
	case *priority > 0:
		writePriority(w, *priority, *aging)
		return
	case *intervals > 0:
		writeIntervals(w, *intervals)
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

// writePriority writes n tasks spawned onto the global queue, task i with
// priority i·7919 mod n (distinct when n is not a multiple of 7919), all
// queued before the first take, then taken in the order of the priority
// policy with the given aging: before the take numbered j (from 0) every
// queued task was passed over j times, so the first aging takes take the
// highest priorities and the rest go in queue order (aged, the head
// first).
func writePriority(w io.Writer, n, aging int) {
	fmt.Fprintf(w, `{"format":"execspec-trace","version":1,"minor":1,"executor":"gentrace","workers":1,"policy":"priority","config":{"aging":%d}}`+"\n", aging)
	prio := func(i int) int { return int(int64(i) * 7919 % int64(n)) }
	seq := 0
	for i := 1; i <= n; i++ {
		seq++
		fmt.Fprintf(w, `{"seq":%d,"kind":"spawn","task":%d,"queue":"global","priority":%d}`+"\n", seq, i, prio(i))
	}
	byPrio := make([]int, n)
	for i := 1; i <= n; i++ {
		byPrio[n-1-prio(i)] = i // highest first (priorities 0..n-1, distinct)
	}
	taken := make([]bool, n+1)
	next, head := 0, 1
	for j := range n {
		var t int
		if aging > 0 && j >= aging {
			for taken[head] {
				head++
			}
			t = head
		} else {
			for taken[byPrio[next]] {
				next++
			}
			t = byPrio[next]
		}
		taken[t] = true
		for _, ev := range []string{`"take","worker":0,"source":"global"`, `"poll-begin","worker":0`, `"poll-end","worker":0,"result":"ready"`} {
			seq++
			fmt.Fprintf(w, `{"seq":%d,"kind":%s,"task":%d}`+"\n", seq, ev, t)
		}
	}
}

// writeIntervals writes n spawns onto the global queue under order
// intervals, push i called at tick i and returned at tick n+i (so every
// push overlaps every other, and any order of them is possible), then
// takes of tasks n, n-1, ..., 1, each polled to Ready.
func writeIntervals(w io.Writer, n int) {
	fmt.Fprintln(w, `{"format":"execspec-trace","version":1,"minor":1,"executor":"gentrace","workers":1,"policy":"fifo","order":"intervals"}`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(w, `{"seq":%d,"kind":"spawn","task":%d,"queue":"global","call":%d,"ret":%d}`+"\n", i, i, i, n+i)
	}
	tick := 2 * n
	for t := n; t >= 1; t-- {
		tick++
		fmt.Fprintf(w, `{"seq":%d,"kind":"take","task":%d,"worker":0,"source":"global","call":%d,"ret":%d}`+"\n", tick, t, tick, tick)
		tick++
		fmt.Fprintf(w, `{"seq":%d,"kind":"poll-begin","task":%d,"worker":0}`+"\n", tick, t)
		tick++
		fmt.Fprintf(w, `{"seq":%d,"kind":"poll-end","task":%d,"worker":0,"result":"ready"}`+"\n", tick, t)
	}
}
