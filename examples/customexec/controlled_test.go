package customexec_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/examples/customexec"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/coverage"
)

// lossy is an executor on executor.Kit with a local queue of one slot per
// worker and a global queue, and a bug: a task re-queued by the worker
// that just polled it (woken during its poll, NOTIFIED) is dropped when
// that worker's slot is full instead of going to the global queue. Like
// customexec it forwards SetScheduler to the Kit, and nothing more.
type lossy struct {
	kit    *executor.Kit
	mu     sync.Mutex
	global []*executor.JoinHandle
	local  [2][]*executor.JoinHandle
	cur    [2]*executor.JoinHandle
	ticks  [2]int
	bug    bool
}

func newLossy(bug bool) *lossy {
	e := &lossy{bug: bug}
	e.kit = executor.NewKit(executor.KitConfig{Workers: 2, Schedule: e.push, Work: e.work})
	return e
}

func (e *lossy) Spawn(f executor.Future) (executor.Handle, error) { return e.kit.Spawn(f) }
func (e *lossy) Wait() error                                      { return e.kit.Wait() }
func (e *lossy) Close() error                                     { return e.kit.Close() }
func (e *lossy) SetScheduler(s executor.Scheduler)                { e.kit.SetScheduler(s) }

func (e *lossy) push(t *executor.JoinHandle) {
	w := e.kit.InWorker()
	e.mu.Lock()
	switch {
	case w < 0:
		e.global = append(e.global, t)
	case len(e.local[w]) == 0:
		e.local[w] = append(e.local[w], t)
	case t == e.cur[w] && e.bug:
		// The bug: the re-queue of a NOTIFIED task onto a full slot is
		// dropped.
	default:
		e.global = append(e.global, t)
	}
	e.mu.Unlock()
	e.kit.Notify()
}

func (e *lossy) pop(w int) (t *executor.JoinHandle) {
	e.mu.Lock()
	defer e.mu.Unlock()
	// The slot and the global queue in turn, so that neither starves.
	e.ticks[w]++
	local := len(e.local[w]) > 0 && (e.ticks[w]%2 == 0 || len(e.global) == 0)
	switch {
	case local:
		t, e.local[w] = e.local[w][0], e.local[w][1:]
	case len(e.global) > 0:
		t, e.global = e.global[0], e.global[1:]
	}
	e.cur[w] = t
	return t
}

func (e *lossy) hasWork(w int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.global)+len(e.local[w]) > 0
}

func (e *lossy) work(w int) { e.kit.Loop(w, e.pop, func() bool { return e.hasWork(w) }) }

// TestKitControlled: an executor on the Kit that forwards SetScheduler
// runs under the controller: its failures are controlled cases (replayed
// exactly, by their schedule's checksum), found on every seed; without the
// bug it holds.
func TestKitControlled(t *testing.T) {
	rep := properties.Check(func() executor.Executor { return newLossy(false) }, properties.Config{Seed: 1, Checks: 100})
	if rep.Verdict() != checker.Holds {
		t.Fatalf("the executor without its bug: %v", rep.Err())
	}
	for seed := uint64(1); seed <= 3; seed++ {
		rep := properties.Check(func() executor.Executor { return newLossy(true) }, properties.Config{Seed: seed, Checks: 200, StopAtFirst: true, ShrinkTime: 300 * time.Millisecond})
		if rep.Verdict() != checker.Violated {
			t.Fatalf("seed %d: the dropped re-queue was not caught", seed)
		}
		for _, r := range rep.Results {
			if r.Standing == properties.ReportedHere {
				if r.Observation == nil || !r.Observation.Controlled {
					t.Errorf("seed %d: the failure was not a controlled case", seed)
				}
				t.Logf("seed %d: %s after %d cases: %s", seed, r.Caught, r.Cases, firstLine(r.Detail))
			}
		}
	}
	// customexec itself is controllable, and its coverage can be measured.
	var ex executor.Executor = customexec.New(2)
	if _, ok := ex.(executor.Controllable); !ok {
		t.Fatal("customexec is not executor.Controllable")
	}
}

func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// TestKitCoverage: the spec coverage of customexec, an executor on the Kit,
// is measured under guided schedules (it is Controllable, a Reporter and a
// Describer), and every run conforms to its policy.
func TestKitCoverage(t *testing.T) {
	res, err := coverage.Run(context.Background(), coverage.Config{
		New: func() executor.Executor { return customexec.New(2) }, Strategy: "guided", Runs: 60, StopAtFailure: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstFailure != nil || res.Report.Outside > 0 || res.Report.VisitedStates == 0 {
		t.Fatalf("coverage of customexec: %v\n%s", res.FirstFailure, res.Report)
	}
	t.Logf("guided, %d runs: %d of %d model states visited", res.Report.Runs, res.Report.VisitedStates, res.Report.ModelStates)
}
