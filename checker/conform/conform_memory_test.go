package conform

import (
	"runtime"
	"testing"

	"github.com/execspec/execspec/internal/testenv"
	"github.com/execspec/execspec/traces"
)

// TestConformanceMemoryPerTask: a trace of many tasks, each spawned, taken
// and polled once, costs the checker a few bytes per task id, so that
// `verify check` fits millions of tasks in 100 MB.
func TestConformanceMemoryPerTask(t *testing.T) {
	testenv.Slow(t, "allocates tens of MB")
	const tasks = 1 << 19
	c, err := New(traces.Header{Format: traces.Format, Version: traces.Version, Workers: 2, Policy: "worksteal"})
	if err != nil {
		t.Fatal(err)
	}
	before := testenv.Heap()
	seq := uint64(0)
	step := func(e traces.Event) {
		seq++
		e.Seq = seq
		if err := c.Step(e); err != nil {
			t.Fatal(err)
		}
	}
	for task := int64(1); task <= tasks; task++ {
		step(traces.Event{Kind: traces.KindSpawn, Task: task, Worker: -1, Queue: traces.QueueGlobal})
		step(traces.Event{Kind: traces.KindTake, Task: task, Worker: 0, Source: traces.SourceGlobal})
		step(traces.Event{Kind: traces.KindPollBegin, Task: task, Worker: 0})
		step(traces.Event{Kind: traces.KindPollEnd, Task: task, Worker: 0, Result: traces.ResultReady})
	}
	per := float64(testenv.Heap()-before) / tasks
	runtime.KeepAlive(c)
	t.Logf("%.1f bytes per task", per)
	// 8 bytes of the checker's own and 6 of the model's state per task,
	// plus the slack of growing slices.
	if per > 20 {
		t.Errorf("the checker keeps %.1f bytes per task id, want at most 20", per)
	}
}

// TestConformanceNoAllocPerEvent: checking an ordinary trace costs no
// allocation per event, only the amortized growth of the tables as new
// task ids come (the event Step is given stays on the stack: nothing it is
// passed to may keep its pointer).
func TestConformanceNoAllocPerEvent(t *testing.T) {
	h := hdr(4, "worksteal", map[string]int{"local-cap": 256, "global-interval": 0})
	ev := newConfGen(t, h, 1).run(t, 1<<14)
	c, err := New(h)
	if err != nil {
		t.Fatal(err)
	}
	// The first third grows the tables; AllocsPerRun steps the second
	// (its warm-up) and counts the allocations of the third.
	n := len(ev) / 3
	parts := [][]traces.Event{ev[:n], ev[n : 2*n], ev[2*n:]}
	run := 0
	step := func() {
		for _, e := range parts[run] {
			if err := c.Step(e); err != nil {
				t.Fatal(err)
			}
		}
		run++
	}
	step()
	allocs := testing.AllocsPerRun(1, step)
	if allocs*100 > float64(len(parts[2])) {
		t.Errorf("%v allocations in %d events, want at most one in 100", allocs, len(parts[2]))
	}
}
