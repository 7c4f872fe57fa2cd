package executor

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/execspec/execspec/traces"
)

// maxOvertakes returns, over a recorded run, the largest number of polls of
// other tasks between a task becoming ready (pushed by a spawn, a wake or a
// re-queue) and its next poll: the figure Bounded states a bound for.
func maxOvertakes(evs []traces.Event) (worst int, task int64) {
	evs = slices.Clone(evs)
	slices.SortFunc(evs, func(a, b traces.Event) int { return int(a.Seq) - int(b.Seq) })
	polls := 0
	readyAt := map[int64]int{}
	for _, e := range evs {
		switch e.Kind {
		case traces.KindSpawn, traces.KindRequeue:
			readyAt[e.Task] = polls
		case traces.KindWake:
			if e.Outcome == traces.OutcomeScheduled {
				readyAt[e.Task] = polls
			}
		case traces.KindPollBegin:
			if at, ok := readyAt[e.Task]; ok {
				if d := polls - at; d > worst {
					worst, task = d, e.Task
				}
				delete(readyAt, e.Task)
			}
			polls++
		}
	}
	return worst, task
}

// TestFairnessBound: executors that state a bound keep it on a workload of
// tasks that wake themselves during every poll (each is ready again at
// once), with mixed priorities for the priority executor.
func TestFairnessBound(t *testing.T) {
	execs := map[string]func() Executor{
		"fifo":         func() Executor { return NewFIFO() },
		"wakeable":     func() Executor { return NewWakeable(2) },
		"timeslice":    func() Executor { return NewTimeslice(TimesliceConfig{Slice: 3}) },
		"timeslice_2":  func() Executor { return NewTimeslice(TimesliceConfig{Workers: 2, Slice: 2}) },
		"retry":        func() Executor { return NewRetry(RetryConfig{}) },
		"priority":     func() Executor { return NewPriority(PriorityConfig{Aging: 2, MaxPriority: 5}) },
		"priority_2":   func() Executor { return NewPriority(PriorityConfig{Workers: 2, Aging: 1, MaxPriority: 7}) },
		"monitored_ff": func() Executor { return NewMonitored(NewFIFO()) },
	}
	const n, polls = 40, 30
	for name, newEx := range execs {
		t.Run(name, func(t *testing.T) {
			ex := newEx()
			rec := &traces.Log{}
			ex.(Reporter).SetRecorder(rec)
			for i := range n {
				var k int
				f := FutureFunc(func(cx *Context) (any, bool) {
					if k++; k == polls {
						return k, true
					}
					cx.Waker().Wake()
					return nil, false
				})
				var err error
				if p, ok := ex.(Prioritized); ok {
					_, err = p.SpawnPriority(f, i%8)
				} else {
					_, err = ex.Spawn(f)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := ex.Close(); err != nil {
				t.Fatal(err)
			}
			bound := ex.(Bounded).FairnessBound(n)
			worst, task := maxOvertakes(rec.Events())
			if worst > bound {
				t.Fatalf("task %d waited for %d polls of others; the stated bound for %d tasks is %d", task, worst, n, bound)
			}
			t.Logf("worst wait %d polls, bound %d", worst, bound)
		})
	}
}

// TestFairnessCheckCatchesStarvation: the measure used above sees a
// priority queue without aging starve a low-priority task, so the bound
// test can fail.
func TestFairnessCheckCatchesStarvation(t *testing.T) {
	// No aging: the low task starves while high ones keep coming.
	ex := NewPriority(PriorityConfig{Aging: -1, MaxPriority: 7})
	rec := &traces.Log{}
	ex.SetRecorder(rec)
	// The high-priority tasks wake themselves and count their polls only
	// once the low one is queued, so that it is overtaken 600 times
	// whatever the schedule (with one worker, a high task is always queued).
	var high [3]int
	var lowQueued atomic.Bool
	for i := range high {
		ex.SpawnPriority(FutureFunc(func(cx *Context) (any, bool) {
			if lowQueued.Load() {
				if high[i]++; high[i] == 200 {
					return nil, true
				}
			}
			cx.Waker().Wake()
			return nil, false
		}), 7)
	}
	low, _ := ex.SpawnPriority(ready(0), 0)
	lowQueued.Store(true)
	low.Join()
	ex.Close()
	worst, task := maxOvertakes(rec.Events())
	if bound := NewPriority(PriorityConfig{Aging: 1, MaxPriority: 7}).FairnessBound(4); worst <= bound {
		t.Fatalf("worst wait %d (task %d) is within the aging executor's bound %d: the measure cannot see starvation", worst, task, bound)
	}
}
