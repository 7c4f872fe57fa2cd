package picture

import (
	"runtime"
	"testing"

	"github.com/execspec/execspec/internal/testenv"
	"github.com/execspec/execspec/traces"
)

// TestTimelineMemoryPerDoneTask: the timeline's picture of the state keeps
// a bit per DONE task, so that --html on a trace of millions of tasks fits
// in a few MB beyond the page's window.
func TestTimelineMemoryPerDoneTask(t *testing.T) {
	testenv.Slow(t, "allocates MBs")
	const tasks = 1 << 19
	s := newTLState(traces.Header{Workers: 2, Policy: "worksteal"})
	before := testenv.Heap()
	for task := int64(1); task <= tasks; task++ {
		for _, e := range []traces.Event{
			{Kind: traces.KindSpawn, Task: task, Worker: -1, Queue: traces.QueueGlobal},
			{Kind: traces.KindTake, Task: task, Worker: 0, Source: traces.SourceGlobal},
			{Kind: traces.KindPollEnd, Task: task, Worker: 0, Result: traces.ResultReady},
		} {
			s.apply(&e)
		}
	}
	per := float64(testenv.Heap()-before) / tasks
	if sn := s.snapshot(); sn.NTasks != tasks || sn.NDone != tasks || s.state(tasks) != "DONE" {
		t.Fatalf("snapshot counts %d tasks, %d DONE; t%d is %q; want all %d DONE", sn.NTasks, sn.NDone, tasks, s.state(tasks), tasks)
	}
	runtime.KeepAlive(s)
	t.Logf("%.2f bytes per DONE task", per)
	if per > 1 {
		t.Errorf("the timeline keeps %.2f bytes per DONE task, want at most 1", per)
	}
}
