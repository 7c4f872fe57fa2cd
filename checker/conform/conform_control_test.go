package conform_test

import (
	"fmt"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/traces"
)

// controlled runs a small workload on a fresh executor under the
// controller c, recording its events in log: two tasks that wake each
// other, a task that wakes itself and spawns, and spawns from outside that
// land on the global queue while the workers take, steal and re-queue.
func controlled(c *control.Controller, newEx func() executor.Executor, log *traces.Log) func() {
	return func() {
		ex := newEx()
		ex.(executor.Controllable).SetScheduler(c)
		ex.(executor.Reporter).SetRecorder(c.Recorder(log))
		var wakers [2]executor.Waker
		var turns [2]int
		for i := range 2 {
			ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
				wakers[i] = cx.Waker()
				turns[i]++
				if o := wakers[1-i]; o.Raw() != nil {
					o.Wake()
				}
				return nil, turns[i] > 3
			}))
		}
		n := 0
		ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
			n++
			if n <= 2 {
				for range 3 {
					ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { return nil, true }))
				}
				cx.Waker().Wake()
				return nil, false
			}
			return nil, true
		}))
		for range 3 {
			ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { return nil, true }))
		}
		if err := ex.Wait(); err != nil {
			panic(err)
		}
		if err := ex.Close(); err != nil {
			panic(err)
		}
	}
}

// Under controlled interleavings (random schedules and PCT), each run of
// the built-in executors records a trace that conforms: the schedules reach
// orders of events that free runs on two cores make rare.
func TestConformanceControlled(t *testing.T) {
	type cons struct {
		name string
		new  func() executor.Executor
	}
	all := []cons{
		{"worksteal-3-gi2-cap2", func() executor.Executor {
			return executor.NewWorkSteal(executor.WorkStealConfig{Workers: 3, LocalCap: 2, GlobalInterval: 2})
		}},
		{"worksteal-half-fifo", func() executor.Executor {
			return executor.NewWorkSteal(executor.WorkStealConfig{Workers: 3, LocalCap: 3, StealHalf: true, OwnerFIFO: true})
		}},
		{"worksteal-slot", func() executor.Executor {
			return executor.NewWorkSteal(executor.WorkStealConfig{Workers: 2, LocalCap: 2, LIFOSlot: true, LIFOMax: 1})
		}},
		{"wakeable-3", func() executor.Executor { return executor.NewWakeable(3) }},
		{"timeslice-2", func() executor.Executor { return executor.NewTimeslice(executor.TimesliceConfig{Workers: 2, Slice: 1}) }},
		{"priority-2", func() executor.Executor { return executor.NewPriority(executor.PriorityConfig{Workers: 2}) }},
		{"retry-2", func() executor.Executor { return executor.NewRetry(executor.RetryConfig{Workers: 2}) }},
	}
	runs := 60
	if testing.Short() {
		runs = 15
	}
	for _, k := range all {
		t.Run(k.name, func(t *testing.T) {
			strategies := []control.Strategy{control.Random(1), control.NewPCT(2, 0, 7), control.NewPCT(3, 0, 11)}
			relaxed := 0
			for si, s := range strategies {
				c := control.New(s)
				for run := range runs {
					var log traces.Log
					if err := c.Run(controlled(c, k.new, &log)); err != nil {
						t.Fatalf("strategy %d run %d: %v", si, run, err)
					}
					h := k.new().(executor.Describer).Describe()
					events := log.Events()
					r := conforms(t, fmt.Sprintf("%s_s%d_%d", k.name, si, run), h, events)
					if r.Verdict != checker.Holds {
						t.Fatalf("schedule: %+v", c.Schedule())
					}
					relaxed += r.Relaxed
				}
			}
			t.Logf("%d runs conform; %d takes needed the [call, seq] window", 3*runs, relaxed)
		})
	}
}
