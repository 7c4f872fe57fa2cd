package rt_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/instrument/rt/rtstd"
	"github.com/execspec/execspec/properties/control/sched"
)

// guards are the ways a test's own code waits for its guard timer while
// the code under test works (done receives when it is finished); each
// reports whether the guard fired first.
var guards = []struct {
	name string
	wait func(done chan int) bool
}{
	{"After", func(done chan int) bool {
		return rt.Select(false, rt.RecvCase(done), rt.RecvCase(rtstd.TestAfter(time.Second))) == 1
	}},
	{"NewTimer", func(done chan int) bool {
		tm := rtstd.TestNewTimer(time.Second)
		defer tm.Stop()
		return rt.Select(false, rt.RecvCase(done), rt.RecvCase(tm.C)) == 1
	}},
	{"NewTicker", func(done chan int) bool {
		tk := rtstd.TestNewTicker(time.Second)
		defer tk.Stop()
		return rt.Select(false, rt.RecvCase(done), rt.RecvCase(tk.C)) == 1
	}},
	{"Tick", func(done chan int) bool {
		return rt.Select(false, rt.RecvCase(done), rt.RecvCase(rtstd.TestTick(time.Second))) == 1
	}},
	{"AfterFunc", func(done chan int) bool {
		fired := make(chan int, 1)
		tm := rtstd.TestAfterFunc(time.Second, func() { rt.Send(fired, 1) })
		defer tm.Stop()
		return rt.Select(false, rt.RecvCase(done), rt.RecvCase(fired)) == 1
	}},
	{"Sleep", func(done chan int) bool {
		rtstd.TestSleep(time.Second)
		return rt.Select(true, rt.RecvCase(done)) != 0
	}},
	{"WithTimeout", func(done chan int) bool {
		ctx, cancel := rtstd.TestWithTimeout(context.Background(), time.Second)
		defer cancel()
		return rt.Select(false, rt.RecvCase(done), rt.RecvCase(ctx.Done())) == 1
	}},
	{"WithDeadlineCause", func(done chan int) bool {
		ctx, cancel := rtstd.TestWithDeadlineCause(context.Background(), time.Now().Add(time.Second), errors.New("guard"))
		defer cancel()
		return rt.Select(false, rt.RecvCase(done), rt.RecvCase(ctx.Done())) == 1
	}},
}

// slowButCorrect is a test of code that always finishes (a worker of a
// few steps) while timers of its own (housekeeping sleeps of 1 ms and
// of 2 s, due before and after the guard) run beside it: guardFired
// tells whether the test's guard fired first, libEarly whether the
// library's 1 ms timer fired while the worker was still at work.
func slowButCorrect(wait func(chan int) bool, guardFired, libEarly *bool) func(*testing.T) {
	return func(t *testing.T) {
		done := make(chan int, 1)
		finished := false
		rt.Go(func() {
			rt.Sleep(time.Millisecond) // the library's own timers
			*libEarly = !finished
			rt.Sleep(2 * time.Second)
		})
		rt.Go(func() {
			for range 5 {
				rt.Gosched()
			}
			finished = true
			rt.Send(done, 1)
		})
		*guardFired = wait(done)
	}
}

// TestTestTimersNotRushed: with early timers, a timer of the test's own
// (made by each of rtstd.TestAfter, TestNewTimer, TestNewTicker, TestTick,
// TestAfterFunc, TestSleep) never fires while the code under test could
// still run, and the library's own timer, due before it, still fires
// early; the runs replay exactly. Under mode 1 (every timer may fire
// early, earlyLegacy) the guard fires early: the false alarm this rule
// removes.
func TestTestTimersNotRushed(t *testing.T) {
	if !*rt.TimersReadable {
		t.Skip("timers are read on Go 1.26 only")
	}
	defer func(legacy bool) { *rt.EarlyLegacy = legacy }(*rt.EarlyLegacy)
	cfg := rt.Config{EarlyTimers: true, LeakAfter: 10 * time.Second}
	for _, g := range guards {
		t.Run(g.name, func(t *testing.T) {
			*rt.EarlyLegacy = false
			fired, libEarly := 0, 0
			for seed := range uint64(150) {
				cfg.Strategy = sched.Random(seed)
				var guard, lib bool
				s, err := rt.Run(t, cfg, slowButCorrect(g.wait, &guard, &lib))
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if guard {
					fired++
				}
				if lib {
					libEarly++
				}
				if seed%10 == 0 {
					var guard2, lib2 bool
					if err := rt.ReplayWith(t, cfg, s, slowButCorrect(g.wait, &guard2, &lib2)); err != nil || guard2 != guard || lib2 != lib {
						t.Fatalf("seed %d: replay %v, guard %v then %v", seed, err, guard, guard2)
					}
				}
			}
			if fired != 0 || libEarly == 0 {
				t.Errorf("the test's guard fired first in %d of 150 runs (want 0); the library's timer fired while the worker ran in %d (want some)", fired, libEarly)
			}
			*rt.EarlyLegacy = true
			fired = 0
			for seed := range uint64(150) {
				cfg.Strategy = sched.Random(seed)
				var guard, lib bool
				if _, err := rt.Run(t, cfg, slowButCorrect(g.wait, &guard, &lib)); err != nil {
					t.Fatalf("mode 1, seed %d: %v", seed, err)
				}
				if guard {
					fired++
				}
			}
			if fired == 0 {
				t.Errorf("mode 1: the test's guard never fired early in 150 runs: the check above proves nothing")
			}
		})
	}
}

// TestLibraryTimeoutRaceFound: a library whose own timeout races with its
// worker (the caller gives up after 10 ms and leaves the worker blocked
// on an unbuffered send: a leak) is found with early timers although the
// test guards it with a timer of its own, and never without them (the
// worker then always finishes before any time passes).
func TestLibraryTimeoutRaceFound(t *testing.T) {
	if !*rt.TimersReadable {
		t.Skip("timers are read on Go 1.26 only")
	}
	defer func(legacy bool) { *rt.EarlyLegacy = legacy }(*rt.EarlyLegacy)
	*rt.EarlyLegacy = false
	get := func() {
		res := make(chan int)
		rt.Go(func() {
			for range 3 {
				rt.Gosched()
			}
			rt.Send(res, 1) // blocks for good once the caller gave up
		})
		rt.Select(false, rt.RecvCase(res), rt.RecvCase(time.After(10*time.Millisecond)))
	}
	body := func(t *testing.T) {
		done := make(chan int, 1)
		rt.Go(func() { get(); rt.Send(done, 1) })
		if rt.Select(false, rt.RecvCase(done), rt.RecvCase(rtstd.TestAfter(time.Second))) == 1 {
			t.Error("timeout")
		}
	}
	for _, early := range []bool{false, true} {
		found := 0
		for seed := range uint64(100) {
			_, err := rt.Run(t, rt.Config{Strategy: sched.Random(seed), EarlyTimers: early}, body)
			if err != nil {
				if _, ok := err.(*rt.HangError); !ok || !strings.Contains(err.Error(), "leak") {
					t.Fatalf("early %v, seed %d: %v", early, seed, err)
				}
				found++
				if early && !strings.Contains(*rt.LastEarly, "--early-timers=false") {
					t.Errorf("the report's early line: %q", *rt.LastEarly)
				}
			}
		}
		if early != (found > 0) {
			t.Errorf("early %v: the leak found in %d of 100 runs", early, found)
		}
	}
}
