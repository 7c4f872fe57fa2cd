package properties_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/internal/kitfifo"
	"github.com/execspec/execspec/properties"
)

// sliceExec is a fair busy-polling executor, written with executor.Kit:
// one worker takes the task at the head of a round-robin queue and polls
// it again and again, woken or not, for a wall-clock slice (slice 0: one
// poll), then puts it at the tail. Wakes do nothing (the task is RUNNING
// between its polls): every task waits at most n-1 slices, which it states
// as its fairness bound in time. It polls spuriously, which the waker
// contract allows; wakeDriven makes it claim otherwise, which the suite
// must catch.
type sliceExec struct {
	q          kitfifo.Queue
	slice      time.Duration
	claimed    time.Duration // the slice FairnessWait states, if not slice
	wakeDriven bool
}

func newSliceExec(slice time.Duration, wakeDriven bool) *sliceExec {
	e := &sliceExec{slice: slice, wakeDriven: wakeDriven}
	e.q.Kit = executor.NewKit(executor.KitConfig{Workers: 1, Schedule: e.q.Push, Work: e.work})
	return e
}

func (e *sliceExec) Spawn(f executor.Future) (executor.Handle, error) { return e.q.Kit.Spawn(f) }
func (e *sliceExec) Wait() error                                      { return e.q.Kit.Wait() }
func (e *sliceExec) Close() error                                     { return e.q.Kit.Close() }
func (e *sliceExec) PollsSpuriously() bool                            { return !e.wakeDriven }

// FairnessWait implements executor.BoundedWait: n-1 slices of the others,
// and one poll each past the end of its slice.
func (e *sliceExec) FairnessWait(n int) time.Duration {
	slice := e.slice
	if e.claimed > 0 {
		slice = e.claimed
	}
	return time.Duration(max(n-1, 0))*slice + time.Millisecond
}

func (e *sliceExec) work(w int) {
	for {
		t := e.q.Pop(w)
		if t == nil {
			if !e.q.Kit.Park(w, e.q.HasWork) {
				return
			}
			continue
		}
		end := time.Now().Add(e.slice)
		for {
			if e.q.Kit.PollOnce(t, w) {
				break
			}
			if !time.Now().Before(end) {
				e.q.Push(t)
				break
			}
		}
	}
}

// TestTimeSliceNoFalseAlarm: a fair busy-polling time-slice executor
// passes the whole suite at slices from none (a round robin with a no-op
// waker) to 20ms, its spurious polls reported as figures, its fairness
// checked against the time it states.
func TestTimeSliceNoFalseAlarm(t *testing.T) {
	for _, c := range []struct {
		slice  time.Duration
		checks int
		only   []string
	}{
		{0, 100, nil},
		{100 * time.Microsecond, 100, nil},
		{2 * time.Millisecond, 50, nil},
		{20 * time.Millisecond, 10, []string{"fairness"}},
	} {
		t.Run(c.slice.String(), func(t *testing.T) {
			n := c.checks
			if v, err := strconv.Atoi(os.Getenv("PROPERTIES_CHECKS")); err == nil && v > 0 {
				// A long run: as many cases as asked, a tenth of them at
				// the 20ms slice, whose cases last a tenth of a second.
				n = v
				if c.slice >= 20*time.Millisecond {
					n = max(v/10, 1)
				}
			}
			if raceEnabled {
				n = max(n/4, 5)
			}
			opts := []properties.Option{properties.Checks(n)}
			if c.only != nil {
				opts = append(opts, properties.Only(c.only...))
			}
			rep := properties.Run(t, func() executor.Executor { return newSliceExec(c.slice, false) }, opts...)
			for _, r := range rep.Results {
				if r.Property.Name == "fairness" && r.Figures.Fairness != "time" {
					t.Errorf("fairness held the executor to %q, want its stated time", r.Figures.Fairness)
				}
			}
		})
	}
}

// TestSpuriousPollsInformation: spurious polls are counted and reported,
// not failed; an executor that states it never polls spuriously and does is
// caught by waker-idempotence.
func TestSpuriousPollsInformation(t *testing.T) {
	newEx := func() executor.Executor { return newSliceExec(0, false) }
	rep := properties.Check(newEx, properties.Config{Checks: 50, Only: []string{"waker-idempotence", "no-lost-wakeup"}})
	if rep.Verdict() != checker.Holds {
		t.Fatalf("spurious polls failed the suite: %v", rep.Err())
	}
	spurious := 0
	for _, r := range rep.Results {
		spurious += r.Figures.Spurious
		t.Logf("%s: %s", r.Property.Name, r.Figures.String())
	}
	if spurious == 0 {
		t.Errorf("a round robin with a no-op waker showed no spurious polls")
	}

	claims := func() executor.Executor { return newSliceExec(0, true) }
	rep = properties.Check(claims, properties.Config{Checks: 50, Only: []string{"waker-idempotence"}, ShrinkTime: 200 * time.Millisecond})
	if rep.Verdict() != checker.Violated || rep.Results[0].Caught != "waker-idempotence" {
		t.Fatalf("an executor that claims to be wake driven and polls spuriously was not caught: %v", rep.Err())
	}
}

// TestTimeBoundChecked: the fairness check holds a time-slice executor to
// the time it states: one that keeps a task for a second while claiming
// 1ms slices is caught, the fair one is not.
func TestTimeBoundChecked(t *testing.T) {
	liar := func() executor.Executor {
		e := newSliceExec(time.Second, false)
		e.claimed = time.Millisecond
		return e
	}
	rep := properties.Check(liar, properties.Config{Checks: 20, Only: []string{"fairness"}, ShrinkTime: 500 * time.Millisecond})
	if rep.Verdict() != checker.Violated {
		t.Fatalf("an executor that keeps a task a second while stating 1ms slices was not caught: %v", rep.Err())
	}
	t.Logf("caught: %s", rep.Results[0].Detail)

	fair := func() executor.Executor { return newSliceExec(20*time.Millisecond, false) }
	rep = properties.Check(fair, properties.Config{Checks: 10, Only: []string{"fairness"}})
	if rep.Verdict() != checker.Holds {
		t.Fatalf("false alarm on a fair time-slice executor: %v", rep.Err())
	}
	// What a fixed budget in polls would have made of it.
	t.Logf("fair 20ms slices: %s (a fixed budget of 1000 polls would fail at %d)", rep.Results[0].Figures.String(), rep.Results[0].Figures.MaxDelay)
}
