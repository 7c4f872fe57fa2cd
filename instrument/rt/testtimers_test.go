package rt

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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
		return Select(false, RecvCase(done), RecvCase(TestAfter(time.Second))) == 1
	}},
	{"NewTimer", func(done chan int) bool {
		tm := TestNewTimer(time.Second)
		defer tm.Stop()
		return Select(false, RecvCase(done), RecvCase(tm.C)) == 1
	}},
	{"NewTicker", func(done chan int) bool {
		tk := TestNewTicker(time.Second)
		defer tk.Stop()
		return Select(false, RecvCase(done), RecvCase(tk.C)) == 1
	}},
	{"Tick", func(done chan int) bool {
		return Select(false, RecvCase(done), RecvCase(TestTick(time.Second))) == 1
	}},
	{"AfterFunc", func(done chan int) bool {
		fired := make(chan int, 1)
		tm := TestAfterFunc(time.Second, func() { Send(fired, 1) })
		defer tm.Stop()
		return Select(false, RecvCase(done), RecvCase(fired)) == 1
	}},
	{"Sleep", func(done chan int) bool {
		TestSleep(time.Second)
		return Select(true, RecvCase(done)) != 0
	}},
	{"WithTimeout", func(done chan int) bool {
		ctx, cancel := TestWithTimeout(context.Background(), time.Second)
		defer cancel()
		return Select(false, RecvCase(done), RecvCase(ctx.Done())) == 1
	}},
	{"WithDeadlineCause", func(done chan int) bool {
		ctx, cancel := TestWithDeadlineCause(context.Background(), time.Now().Add(time.Second), errors.New("guard"))
		defer cancel()
		return Select(false, RecvCase(done), RecvCase(ctx.Done())) == 1
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
		Go(func() {
			Sleep(time.Millisecond) // the library's own timers
			*libEarly = !finished
			Sleep(2 * time.Second)
		})
		Go(func() {
			for range 5 {
				Gosched()
			}
			finished = true
			Send(done, 1)
		})
		*guardFired = wait(done)
	}
}

// TestTestTimersNotRushed: with early timers, a timer of the test's own
// (made by each of TestAfter, TestNewTimer, TestNewTicker, TestTick,
// TestAfterFunc, TestSleep) never fires while the code under test could
// still run, and the library's own timer, due before it, still fires
// early; the runs replay exactly. Under mode 1 (every timer may fire
// early, earlyLegacy) the guard fires early: the false alarm this rule
// removes.
func TestTestTimersNotRushed(t *testing.T) {
	if !testTimersReadable {
		t.Skip("timers are read on Go 1.26 only")
	}
	defer func(legacy bool) { earlyLegacy = legacy }(earlyLegacy)
	cfg := Config{EarlyTimers: true, LeakAfter: 10 * time.Second}
	for _, g := range guards {
		t.Run(g.name, func(t *testing.T) {
			earlyLegacy = false
			fired, libEarly := 0, 0
			for seed := range uint64(150) {
				cfg.Strategy = sched.Random(seed)
				var guard, lib bool
				s, err := Run(t, cfg, slowButCorrect(g.wait, &guard, &lib))
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
					if err := ReplayWith(t, cfg, s, slowButCorrect(g.wait, &guard2, &lib2)); err != nil || guard2 != guard || lib2 != lib {
						t.Fatalf("seed %d: replay %v, guard %v then %v", seed, err, guard, guard2)
					}
				}
			}
			if fired != 0 || libEarly == 0 {
				t.Errorf("the test's guard fired first in %d of 150 runs (want 0); the library's timer fired while the worker ran in %d (want some)", fired, libEarly)
			}
			earlyLegacy = true
			fired = 0
			for seed := range uint64(150) {
				cfg.Strategy = sched.Random(seed)
				var guard, lib bool
				if _, err := Run(t, cfg, slowButCorrect(g.wait, &guard, &lib)); err != nil {
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

// TestContextTimerFound: the timer of a context made by WithTimeout is
// found (the context package keeps it in timerCtx.timer), pending until
// the context is cancelled; a context whose parent's deadline comes
// first has none of its own.
func TestContextTimerFound(t *testing.T) {
	if !testTimersReadable {
		t.Skip("timers are read on Go 1.26 only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	p := contextTimer(ctx)
	if p == nil || afterFuncWhen((*time.Timer)(p)) <= 0 {
		t.Fatalf("no pending timer found in %T", ctx)
	}
	cancel()
	if afterFuncWhen((*time.Timer)(p)) != 0 {
		t.Errorf("the timer of a cancelled context is still pending")
	}
	inner, cancel2 := context.WithTimeout(ctx, time.Hour)
	defer cancel2()
	if contextTimer(inner) != nil || contextTimer(context.Background()) != nil {
		t.Errorf("a context without a timer of its own has one")
	}
}

// TestLibraryTimeoutRaceFound: a library whose own timeout races with its
// worker (the caller gives up after 10 ms and leaves the worker blocked
// on an unbuffered send: a leak) is found with early timers although the
// test guards it with a timer of its own, and never without them (the
// worker then always finishes before any time passes).
func TestLibraryTimeoutRaceFound(t *testing.T) {
	if !testTimersReadable {
		t.Skip("timers are read on Go 1.26 only")
	}
	defer func(legacy bool) { earlyLegacy = legacy }(earlyLegacy)
	earlyLegacy = false
	get := func() {
		res := make(chan int)
		Go(func() {
			for range 3 {
				Gosched()
			}
			Send(res, 1) // blocks for good once the caller gave up
		})
		Select(false, RecvCase(res), RecvCase(time.After(10*time.Millisecond)))
	}
	body := func(t *testing.T) {
		done := make(chan int, 1)
		Go(func() { get(); Send(done, 1) })
		if Select(false, RecvCase(done), RecvCase(TestAfter(time.Second))) == 1 {
			t.Error("timeout")
		}
	}
	for _, early := range []bool{false, true} {
		found := 0
		for seed := range uint64(100) {
			_, err := Run(t, Config{Strategy: sched.Random(seed), EarlyTimers: early}, body)
			if err != nil {
				if _, ok := err.(*HangError); !ok || !strings.Contains(err.Error(), "leak") {
					t.Fatalf("early %v, seed %d: %v", early, seed, err)
				}
				found++
				if early && !strings.Contains(lastEarly, "--early-timers=false") {
					t.Errorf("the report's early line: %q", lastEarly)
				}
			}
		}
		if early != (found > 0) {
			t.Errorf("early %v: the leak found in %d of 100 runs", early, found)
		}
	}
}

// TestEarlyModes: a schedule made with early timers records mode 2 (mode
// 1 while replaying one of mode 1); its replay takes the file's mode;
// a mode this build does not know is refused.
func TestEarlyModes(t *testing.T) {
	defer func(was, legacy bool) { earlyFromEnv, earlyLegacy = was, legacy }(earlyFromEnv, earlyLegacy)
	for _, c := range []struct {
		env, legacy bool
		want        string
	}{{false, false, "0"}, {true, false, "2"}, {true, true, "1"}} {
		earlyFromEnv, earlyLegacy = c.env, c.legacy
		k, v, _ := strings.Cut(ModeComment(), ": ")
		earlyFromEnv, earlyLegacy = !c.env, !c.legacy
		meta := map[string]string{k: v}
		if err := CheckMode(meta); err != nil || k != metaEarly || v != c.want {
			t.Fatalf("saved with early %v, legacy %v: %v, %v; want mode %s", c.env, c.legacy, meta, err, c.want)
		}
		ReplayMode(meta)
		if earlyFromEnv != c.env || earlyLegacy != c.legacy {
			t.Errorf("mode %s replays with early %v, legacy %v", c.want, earlyFromEnv, earlyLegacy)
		}
	}
	if err := CheckMode(map[string]string{metaEarly: "3"}); err == nil || !strings.Contains(err.Error(), `"3": expected 0`) {
		t.Errorf("an unknown mode: %v", err)
	}
}
