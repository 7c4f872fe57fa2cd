package properties_test

import (
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/internal/kitfifo"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/traces"
)

// sleepyFIFO is customexec (a FIFO on executor.Kit, 2 workers,
// controllable, reporting) with an optional bug: a push made by a worker
// (a re-queue of a task woken during its poll, a spawn from a task) does
// not notify, so a parked worker sleeps while that worker does all the
// work. Nothing is lost and nothing hangs: only work conservation sees it.
type sleepyFIFO struct {
	q   kitfifo.Queue
	bug bool
}

func newSleepyFIFO(bug bool) *sleepyFIFO {
	e := &sleepyFIFO{q: kitfifo.Queue{Marked: true}, bug: bug}
	e.q.Kit = executor.NewKit(executor.KitConfig{Workers: 2, Schedule: e.push, Work: e.q.Work})
	return e
}

func (e *sleepyFIFO) Spawn(f executor.Future) (executor.Handle, error) { return e.q.Kit.Spawn(f) }
func (e *sleepyFIFO) Wait() error                                      { return e.q.Kit.Wait() }
func (e *sleepyFIFO) Close() error                                     { return e.q.Kit.Close() }
func (e *sleepyFIFO) SetRecorder(r executor.Recorder)                  { e.q.Kit.SetRecorder(r) }
func (e *sleepyFIFO) SetScheduler(s executor.Scheduler)                { e.q.Kit.SetScheduler(s) }
func (e *sleepyFIFO) Describe() traces.Header                          { return e.q.Kit.Header("sleepy", "fifo") }

func (e *sleepyFIFO) push(t *executor.JoinHandle) {
	e.q.Put(t)
	if !e.bug || e.q.Kit.InWorker() < 0 {
		e.q.Kit.Notify()
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

// TestWorkConservationNoFalseAlarm measures the work-conservation check on
// the built-in executors and on customexec's design (sleepyFIFO without
// its bug), under the controller: none may fail. PROPERTIES_FAIRNESS_LONG
// gives the number of cases per executor; bench/fairness.sh runs it.
func TestWorkConservationNoFalseAlarm(t *testing.T) {
	n := longCases(t)
	mks := map[string]func() executor.Executor{"kit-fifo": func() executor.Executor { return newSleepyFIFO(false) }}
	for _, name := range executor.BuiltinNames() {
		mks[name], _ = executor.Builtin(name)
	}
	for name, mk := range mks {
		t.Run(name, func(t *testing.T) { noFalseAlarm(t, name, mk, n, "work-conservation") })
	}
}
