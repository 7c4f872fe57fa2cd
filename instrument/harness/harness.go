package harness

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control/sched"
)

// Test runs body under control with the Options of the environment
// (OptionsFromEnv): each run in its own synctest bubble, one goroutine at
// a time. The first failing run (a deadlock, a leak, a panic, a failed
// t) fails t, saves its schedule and says how to replay it. This is what
// the rewriter makes of each TestXxx function of a package under test.
func Test(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	o, err := OptionsFromEnv()
	if err != nil {
		t.Fatalf("execspec/rt: %v", err)
	}
	TestWith(t, o, body)
}

// TestWith is Test with explicit Options.
func TestWith(t *testing.T, o Options, body func(t *testing.T)) {
	t.Helper()
	if _, err := rt.NewBubble(t); err != nil {
		t.Fatal(err) // a Go whose runtime the scheduler does not know
	}
	runs := o.runs()
	strategy, replay, _, err := o.plan()
	if err != nil {
		t.Fatal(err)
	}
	if replay != nil {
		runs = 1
	}
	out := Outcome{Test: t.Name(), Strategy: o.Strategy}
	start := time.Now()
	owned := false // the body makes its own runs (Own): its Session reports
	defer func() {
		out.Seconds = time.Since(start).Seconds()
		if o.Report != "" && !owned {
			writeOutcome(t, o.Report, out)
		}
	}()
	budget := NewBudget(o.Time)
	// Each run has a bubble of its own, and each holds the process on
	// one P (rt.HoldOneProc); held across them, the P count is set once,
	// not twice a run.
	defer rt.HoldOneProc()()
	for i := range runs {
		if budget.Spent(t, i) {
			out.TimeUp = true
			break
		}
		out.Runs = i + 1
		// Each run has a bubble of its own, ended before the next.
		b, err := rt.NewBubble(t)
		if err != nil {
			t.Fatal(err)
		}
		failed, ownedNow := testRun(t, b, o, i, runs, strategy, replay, body, &out)
		if err := b.Close(); err != nil {
			t.Log(err)
		}
		if ownedNow {
			// The body asked to own its runs (Own): it is called again,
			// outside any bubble, and makes them through its Session.
			owned = true
			owners.Store(t, o)
			defer owners.Delete(t)
			body(t)
			return
		}
		if failed {
			return
		}
	}
}

// testRun makes run i of TestWith's runs in b (a replay of replay when
// it is not nil, else with strategy) and reports a failure on the
// bubble's test, as the body's own failures are: it records the run in
// out and says whether it failed, or whether the body asked to own its
// runs.
func testRun(t *testing.T, b *rt.Bubble, o Options, i, runs int, strategy sched.Strategy, replay *sched.Schedule, body func(t *testing.T), out *Outcome) (failed, owned bool) {
	var rp *sched.Replay
	if replay != nil {
		rp = sched.NewReplay(*replay)
		strategy = rp
	}
	var bt *testing.T
	s, err := b.Run(rt.Config{Strategy: strategy, MaxSteps: o.MaxSteps, Seed: o.Seed + uint64(i)}, func(t *testing.T) {
		bt = t
		body(t)
	})
	if errors.Is(err, errOwned) {
		return false, true
	}
	out.Steps = s.Steps
	out.Checksum = fmt.Sprintf("%016x", s.Checksum)
	if rp != nil {
		if derr := rp.Check(s); derr != nil {
			err = derr
		} else {
			out.Replayed = true
		}
	}
	if bt == nil {
		bt = t // the run never reached the body
	}
	// Not a helper: the lines below are the harness's (harness.go:), which
	// verify test leaves out of the test's own log.
	if err == nil && !bt.Failed() {
		return false, false
	}
	out.FailedRun = i + 1
	out.Kind = kind(err)
	out.Early = b.EarlyNote()
	if err != nil {
		out.Error = err.Error()
	} else {
		out.Error = "the test failed"
	}
	if rp == nil && !errors.Is(err, sched.ErrBudget) {
		path := SchedulePath(o.Out, t.Name())
		if serr := SaveSchedule(path, s, nil); serr != nil {
			bt.Errorf("execspec/rt: %v", serr)
		} else {
			out.Schedule = path
		}
	}
	if err != nil {
		bt.Errorf("run %d of %d (%s, seed %d): %v", i+1, runs, o.Strategy, o.Seed, err)
	} else {
		bt.Errorf("run %d of %d (%s, seed %d) failed", i+1, runs, o.Strategy, o.Seed)
	}
	if out.Early != "" {
		bt.Log(out.Early)
	}
	if out.Schedule != "" {
		bt.Errorf("schedule saved; replay it with:\n\t%s", replayCommand(o, t.Name(), out.Schedule))
	}
	return true, false
}
