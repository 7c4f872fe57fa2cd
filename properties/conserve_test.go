package properties_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/traces"
)

// sleepyFIFO is customexec (a FIFO on executor.Kit, 2 workers,
// controllable, reporting) with an optional bug: a push made by a worker
// (a re-queue of a task woken during its poll, a spawn from a task) does
// not notify, so a parked worker sleeps while that worker does all the
// work. Nothing is lost and nothing hangs: only work conservation sees it.
type sleepyFIFO struct {
	kit *executor.Kit
	mu  sync.Mutex
	q   []*executor.JoinHandle
	bug bool
}

func newSleepyFIFO(bug bool) *sleepyFIFO {
	e := &sleepyFIFO{bug: bug}
	e.kit = executor.NewKit(executor.KitConfig{Workers: 2, Schedule: e.push, Work: e.work})
	return e
}

func (e *sleepyFIFO) Spawn(f executor.Future) (executor.Handle, error) { return e.kit.Spawn(f) }
func (e *sleepyFIFO) Wait() error                                      { return e.kit.Wait() }
func (e *sleepyFIFO) Close() error                                     { return e.kit.Close() }
func (e *sleepyFIFO) SetRecorder(r executor.Recorder)                  { e.kit.SetRecorder(r) }
func (e *sleepyFIFO) SetScheduler(s executor.Scheduler)                { e.kit.SetScheduler(s) }
func (e *sleepyFIFO) Describe() traces.Header                          { return e.kit.Header("sleepy", "fifo") }

func (e *sleepyFIFO) push(t *executor.JoinHandle) {
	e.mu.Lock()
	e.q = append(e.q, t)
	e.kit.Pushed(t)
	e.mu.Unlock()
	if !e.bug || e.kit.InWorker() < 0 {
		e.kit.Notify()
	}
}

func (e *sleepyFIFO) pop(w int) (t *executor.JoinHandle) {
	e.mu.Lock()
	if len(e.q) > 0 {
		t, e.q = e.q[0], e.q[1:]
		e.kit.Took(t, w)
	}
	e.mu.Unlock()
	return t
}

func (e *sleepyFIFO) hasWork() bool { e.mu.Lock(); defer e.mu.Unlock(); return len(e.q) > 0 }

func (e *sleepyFIFO) work(w int) {
	for {
		if t := e.pop(w); t != nil {
			e.kit.Run(t, w)
		} else if !e.kit.Park(w, e.hasWork) {
			return
		}
	}
}

// TestWorkConservation: a worker left asleep while the other does the work
// it could share is caught, with the worker, the queue and the task named,
// on every seed; the same executor that notifies holds.
func TestWorkConservation(t *testing.T) {
	only := []string{"work-conservation", "conformance", "liveness", "fairness"}
	rep := properties.Check(func() executor.Executor { return newSleepyFIFO(false) }, properties.Config{Seed: 1, Checks: 300, Only: only})
	if rep.Verdict() != checker.Holds {
		t.Fatalf("the executor that notifies: %v", rep.Err())
	}
	for seed := uint64(1); seed <= 3; seed++ {
		rep := properties.Check(func() executor.Executor { return newSleepyFIFO(true) }, properties.Config{Seed: seed, Checks: 300, Only: only, ShrinkTime: 300 * time.Millisecond})
		var r *properties.Result
		for _, x := range rep.Results {
			if x.Standing == properties.ReportedHere && x.Caught == "work-conservation" {
				r = x
			}
		}
		if r == nil {
			t.Fatalf("seed %d: a worker left asleep was not caught:\n%s", seed, rep)
		}
		if !strings.Contains(r.Detail, "worker ") || !strings.Contains(r.Detail, "global queue") || !strings.Contains(r.Detail, "task ") {
			t.Errorf("seed %d: the detail does not name the worker, the queue and the task: %s", seed, r.Detail)
		}
		t.Logf("seed %d, case %d: %s", seed, r.Cases, r.Detail)
	}
}
