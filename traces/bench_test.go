package traces

import (
	"bytes"
	"encoding/json"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execspec/execspec/internal/cputime"
)

// benchEvents is a realistic mix: spawn, take (local, global, steal),
// poll-begin, poll-end, wake, with call/return ticks on queue operations.
func benchEvents(n int) []Event {
	out := make([]Event, 0, n)
	for i := 0; len(out) < n; i++ {
		t := int64(i + 1)
		w := int32(i % 4)
		s := uint64(len(out)) * 3
		src := []Source{SourceLocal, SourceGlobal, SourceSteal, SourceLocal}[i%4]
		out = append(out,
			Event{Seq: s + 1, Kind: KindSpawn, Task: t, Worker: -1, Victim: -1, Queue: QueueGlobal, Call: s + 1, Return: s + 2},
			Event{Seq: s + 2, Kind: KindTake, Task: t, Worker: w, Victim: (w + 1) % 4, Source: src, Call: s + 2, Return: s + 3},
			Event{Seq: s + 3, Kind: KindPollBegin, Task: t, Worker: w, Victim: -1},
			Event{Seq: s + 4, Kind: KindPollEnd, Task: t, Worker: w, Victim: -1, Result: ResultPending},
			Event{Seq: s + 5, Kind: KindWake, Task: t, Worker: -1, Victim: -1, Outcome: OutcomeScheduled, Queue: QueueGlobal},
		)
	}
	return out[:n]
}

var benchHeader = Header{Format: Format, Version: Version, Executor: "bench", Workers: 4, Policy: "worksteal"}

func BenchmarkWrite(b *testing.B) {
	events := benchEvents(1 << 16)
	var size int64
	cpu0 := cputime.Process()
	for b.Loop() {
		w, _ := NewWriter(io.Discard, benchHeader)
		cw := &countWriter{}
		w.bw.Reset(cw)
		for _, e := range events {
			w.Write(e)
		}
		w.Flush()
		size = cw.n
	}
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N)/float64(len(events)), "cpu-ns/event")
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(len(events))
	b.ReportMetric(1e9/perOp, "events/s")
	b.ReportMetric(float64(size)/float64(len(events)), "bytes/event")
	b.ReportMetric(perOp, "ns/event")
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func BenchmarkRead(b *testing.B) {
	events := benchEvents(1 << 16)
	var buf bytes.Buffer
	WriteAll(&buf, benchHeader, events)
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	var e Event
	cpu0 := cputime.Process()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data), "bench")
		if err != nil {
			b.Fatal(err)
		}
		for r.NextInto(&e) == nil {
		}
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(len(events))
	b.ReportMetric(1e9/perOp, "events/s")
	b.ReportMetric(perOp, "ns/event")
	// CPU time of the process per event: on a shared machine, wall time
	// also counts the time other processes had the core.
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N)/float64(len(events)), "cpu-ns/event")
}

// BenchmarkDecodeLine is the decoder alone on one take line.
func BenchmarkDecodeLine(b *testing.B) {
	line := []byte(`{"seq":123457,"kind":"take","task":4242,"worker":1,"source":"steal","victim":0,"call":123456,"ret":123458}`)
	var (
		d decoder
		e Event
	)
	for b.Loop() {
		if err := d.decodeEvent(line, &e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseText(b *testing.B) {
	events := benchEvents(1 << 12)
	var buf bytes.Buffer
	WriteText(&buf, benchHeader, events)
	data := buf.Bytes()
	for b.Loop() {
		if _, _, err := ParseText(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(len(events))
	b.ReportMetric(1e9/perOp, "events/s")
}

// BenchmarkLogRecord records from parallel goroutines, each as its own
// worker, as an executor's workers do.
func BenchmarkLogRecord(b *testing.B) {
	var (
		l    Log
		next atomic.Int32
	)
	b.RunParallel(func(pb *testing.PB) {
		e := Event{Seq: 1, Kind: KindTake, Task: 1, Worker: next.Add(1) - 1, Source: SourceLocal}
		for pb.Next() {
			l.Record(e)
		}
	})
}

// stdEvent is an event as encoding/json decodes it, the benchmarks' yardstick
// for the hand-written decoder.
type stdEvent struct {
	Seq     uint64 `json:"seq"`
	Kind    string `json:"kind"`
	Task    int64  `json:"task"`
	Worker  int32  `json:"worker"`
	Source  string `json:"source"`
	Victim  int32  `json:"victim"`
	Queue   string `json:"queue"`
	Result  string `json:"result"`
	Outcome string `json:"outcome"`
	Rule    string `json:"rule"`
	Call    uint64 `json:"call"`
	Ret     uint64 `json:"ret"`
	Detail  string `json:"detail"`
}

// BenchmarkDecodeLineStdlib decodes the same line with encoding/json into
// an equivalent struct, for a side-by-side ratio with BenchmarkDecodeLine.
func BenchmarkDecodeLineStdlib(b *testing.B) {
	line := []byte(`{"seq":123457,"kind":"take","task":4242,"worker":1,"source":"steal","victim":0,"call":123456,"ret":123458}`)
	var v stdEvent
	for b.Loop() {
		if err := json.Unmarshal(line, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeVsStdlib decodes the same lines with the hand-written
// decoder and with encoding/json, alternating in one loop so that both see
// the same machine load, and reports the ratio of their times.
func BenchmarkDecodeVsStdlib(b *testing.B) {
	events := benchEvents(256)
	lines := make([][]byte, len(events))
	for i := range events {
		lines[i] = appendEvent(nil, &events[i])
	}
	var (
		d         decoder
		e         Event
		v         stdEvent
		ours, std time.Duration
	)
	for b.Loop() {
		t0 := time.Now()
		for _, l := range lines {
			if err := d.decodeEvent(l, &e); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		for _, l := range lines {
			v = stdEvent{}
			if err := json.Unmarshal(l, &v); err != nil {
				b.Fatal(err)
			}
		}
		t2 := time.Now()
		ours += t1.Sub(t0)
		std += t2.Sub(t1)
	}
	n := float64(b.N) * float64(len(lines))
	b.ReportMetric(float64(ours.Nanoseconds())/n, "ns/event-ours")
	b.ReportMetric(float64(std.Nanoseconds())/n, "ns/event-stdlib")
	b.ReportMetric(float64(std)/float64(ours), "stdlib/ours")
}

// BenchmarkLogRecordOne is one goroutine recording: the cost an executor
// with one worker pays per event.
func BenchmarkLogRecordOne(b *testing.B) {
	var l Log
	e := Event{Seq: 1, Kind: KindTake, Task: 1, Worker: 0, Source: SourceLocal}
	for b.Loop() {
		l.Record(e)
	}
}
