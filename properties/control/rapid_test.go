package control

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/executor"
)

// fakeTB records what rapid reports, so that a test can assert that a
// property fails (and how it shrank) without failing itself.
type fakeTB struct {
	testing.TB
	failed bool
	msgs   []string
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return "fake" }
func (f *fakeTB) Logf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Log(args ...any)                   { f.msgs = append(f.msgs, fmt.Sprint(args...)) }
func (f *fakeTB) Errorf(format string, args ...any) { f.failed = true; f.Logf(format, args...) }
func (f *fakeTB) Error(args ...any)                 { f.failed = true; f.Log(args...) }
func (f *fakeTB) Fatalf(format string, args ...any) { f.failed = true; f.Logf(format, args...) }
func (f *fakeTB) Fatal(args ...any)                 { f.failed = true; f.Log(args...) }
func (f *fakeTB) FailNow()                          { f.failed = true }
func (f *fakeTB) Fail()                             { f.failed = true }
func (f *fakeTB) Failed() bool                      { return f.failed }
func (f *fakeTB) Skipf(string, ...any)              {}
func (f *fakeTB) Skip(...any)                       {}
func (f *fakeTB) SkipNow()                          {}

// noFailFile keeps rapid from writing testdata/rapid files for the
// expected failures of these tests.
func noFailFile(t *testing.T) {
	f := flag.Lookup("rapid.nofailfile")
	if f == nil {
		t.Fatal("rapid.nofailfile flag not registered")
	}
	old := f.Value.String()
	if err := f.Value.Set("true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

// rapid draws the schedule; the lost update is found and shrunk to the
// schedule with one preemption, which is the least it needs.
func TestRapidFindsAndShrinksLostUpdate(t *testing.T) {
	noLeak(t)
	noFailFile(t)
	var last Schedule
	fails := 0
	ftb := &fakeTB{TB: t}
	rapid.Check(ftb, func(rt *rapid.T) {
		goroutines := rapid.IntRange(2, 4).Draw(rt, "goroutines")
		c := New(RapidChooser(rt))
		x := 0
		err := c.Run(func() {
			for range goroutines {
				c.Go(func() {
					v := x
					c.Yield(executor.PointNone)
					x = v + 1
				})
			}
		})
		if err != nil {
			rt.Fatal(err)
		}
		if x != goroutines {
			fails++
			last = c.Schedule()
			rt.Fatalf("lost update: x = %d", x)
		}
	})
	if !ftb.failed || fails == 0 {
		t.Fatal("rapid did not find the lost update")
	}
	if last.Preemptions() != 1 {
		t.Errorf("shrunk schedule has %d preemptions, want 1: %+v", last.Preemptions(), last.Choices)
	}
	out := strings.Join(ftb.msgs, "\n")
	if !strings.Contains(out, "goroutines") || !strings.Contains(out, "lost update") {
		t.Errorf("rapid's report lacks the draws:\n%s", out)
	}
	t.Logf("shrunk schedule: %+v", last.Choices)
}

// rapid with PCT draws: the depth-2 bug is found too. Rapid's integers
// are not uniform (it favours small and boundary values), so a change point
// lands in the ten-step window less often than with NewPCT: the test allows
// up to 20 rapid.Checks of 100 cases.
func TestRapidPCTFindsDepth2(t *testing.T) {
	noLeak(t)
	noFailFile(t)
	for attempt := 1; attempt <= 20; attempt++ {
		ftb := &fakeTB{TB: t}
		rapid.Check(ftb, func(rt *rapid.T) {
			c := New(RapidPCT(rt, 2, 65))
			bug := false
			if err := c.Run(depth2(c, &bug)); err != nil {
				rt.Fatal(err)
			}
			if bug {
				rt.Fatal("depth-2 bug")
			}
		})
		if ftb.failed {
			t.Logf("found in rapid.Check %d", attempt)
			return
		}
	}
	t.Fatal("rapid with PCT draws did not find the depth-2 bug in 20 rapid.Checks")
}

// A correct program passes under rapid's schedules (no false alarm).
func TestRapidLockedHolds(t *testing.T) {
	noLeak(t)
	rapid.Check(t, func(rt *rapid.T) {
		c := New(RapidChooser(rt))
		workers := rapid.IntRange(1, 3).Draw(rt, "workers")
		tasks := rapid.IntRange(0, 6).Draw(rt, "tasks")
		prog, ran := poolProgram(c, workers, tasks, false)
		if err := c.Run(prog); err != nil {
			rt.Fatal(err)
		}
		if *ran != tasks {
			rt.Fatalf("%d of %d tasks ran", *ran, tasks)
		}
	})
}

// The schedule and the workload shrink together: the mini pool with a
// condition variable that loses a broadcast deadlocks; rapid finds it with
// drawn sizes (up to 3 workers and 5 tasks) and a drawn schedule, and
// shrinks both: to at most three workers and tasks together. (The least is
// one worker, no task and two preemptions: Close runs while the only
// worker is between its check and its wait. Rapid's shrinking is a
// heuristic; it reaches that in most runs, not all.)
func TestRapidShrinksWorkloadAndSchedule(t *testing.T) {
	noLeak(t)
	noFailFile(t)
	ftb := &fakeTB{TB: t}
	var last Schedule
	var lastWorkers, lastTasks int
	rapid.Check(ftb, func(rt *rapid.T) {
		workers := rapid.IntRange(1, 3).Draw(rt, "workers")
		tasks := rapid.IntRange(0, 5).Draw(rt, "tasks")
		c := New(RapidChooser(rt))
		prog, ran := poolProgram(c, workers, tasks, true)
		err := c.Run(prog)
		if err == nil && *ran == tasks {
			return
		}
		last, lastWorkers, lastTasks = c.Schedule(), workers, tasks
		var d *DeadlockError
		if errors.As(err, &d) {
			rt.Fatal("deadlock")
		}
		rt.Fatalf("%v, %d of %d tasks ran", err, *ran, tasks)
	})
	if !ftb.failed {
		t.Fatal("rapid did not find the lost wakeup")
	}
	if lastWorkers+lastTasks > 3 || last.Preemptions() < 2 {
		t.Errorf("shrunk to %d workers, %d tasks, %d preemptions (%+v); want at most 3 workers and tasks together, and the 2 preemptions the bug needs", lastWorkers, lastTasks, last.Preemptions(), last.Choices)
	}
	t.Logf("shrunk: %d workers, %d tasks, schedule %+v", lastWorkers, lastTasks, last.Choices)
}
