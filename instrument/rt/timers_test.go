package rt

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execspec/execspec/properties/control/sched"
)

// TestEarlyTimers: with EarlyTimers a goroutine's sleep may end before a
// goroutine that could run has run (it is slow), which a search without
// it never sees; the runs that see it replay exactly.
func TestEarlyTimers(t *testing.T) {
	if !timersReadable {
		t.Skip("timers are read on Go 1.26 only")
	}
	body := func(which *int) func(t *testing.T) {
		return func(t *testing.T) {
			ch := make(chan int)
			Go(func() { Sleep(2 * time.Second); Select(true, SendCase(ch, 1)) })
			*which = Select(false, RecvCase(ch), RecvCase(time.After(time.Second)))
		}
	}
	for _, early := range []bool{false, true} {
		seen := map[int]bool{}
		for seed := range uint64(30) {
			var which int
			// A slow goroutine starts its sleep late: it may still sleep
			// a while after the body returned.
			cfg := Config{EarlyTimers: early, LeakAfter: 10 * time.Second}
			cfg.Strategy = sched.Random(seed)
			s, err := Run(t, cfg, body(&which))
			if err != nil {
				t.Fatalf("early %v, seed %d: %v", early, seed, err)
			}
			seen[which] = true
			var again int
			if err := ReplayWith(t, cfg, s, body(&again)); err != nil || again != which {
				t.Fatalf("early %v, seed %d: replay %v, case %d then %d", early, seed, err, which, again)
			}
		}
		if early != seen[0] || !seen[1] {
			t.Errorf("early %v: cases seen %v", early, seen)
		}
	}
}

// TestSameInstant: two timers of the same virtual instant are received in
// an order the schedule chooses (the runtime randomizes the order in which
// they fire): replays take the same case.
func TestSameInstant(t *testing.T) {
	body := func(got *[]int) func(t *testing.T) {
		return func(t *testing.T) {
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			after := time.After(4 * time.Millisecond)
			for {
				i := Select(false, RecvCase(tick.C), RecvCase(after))
				*got = append(*got, i)
				if i == 1 {
					return
				}
			}
		}
	}
	for seed := range uint64(20) {
		var got []int
		s, err := Run(t, Config{Strategy: sched.Random(seed)}, body(&got))
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			var again []int
			if err := Replay(t, s, body(&again)); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if len(again) != len(got) || errors.Is(err, sched.ErrDiverged) {
				t.Fatalf("seed %d: %v, then %v", seed, got, again)
			}
		}
	}
}

// TestLazyTimers: timers whose time came while nobody waited on their
// channels hold no value yet (the runtime sends it when the channel is
// received from); a select over two of them is still the schedule's
// choice, the same in every replay.
func TestLazyTimers(t *testing.T) {
	if !timersReadable {
		t.Skip("timers are read on Go 1.26 only")
	}
	body := func(got *int) func(t *testing.T) {
		return func(t *testing.T) {
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			after := time.NewTimer(3 * time.Millisecond)
			// Blocked on both channels, then on neither while the
			// timer's time comes.
			Select(false, RecvCase(tick.C), RecvCase(after.C))
			Sleep(5 * time.Millisecond)
			*got = Select(false, RecvCase(tick.C), RecvCase(after.C))
		}
	}
	seen := map[int]bool{}
	for seed := range uint64(20) {
		var got int
		s, err := Run(t, Config{Strategy: sched.Random(seed)}, body(&got))
		if err != nil {
			t.Fatal(err)
		}
		seen[got] = true
		for range 5 {
			var again int
			if err := Replay(t, s, body(&again)); err != nil || again != got {
				t.Fatalf("seed %d: case %d, then %d (%v)", seed, got, again, err)
			}
		}
	}
	if !seen[0] || !seen[1] {
		t.Errorf("cases seen: %v", seen)
	}
}

// TestEarlyAfterFunc: with EarlyTimers a time.AfterFunc callback may run
// while the goroutine that set it could still run (it is slow), which a
// search without it never sees; the runs that see it replay exactly.
func TestEarlyAfterFunc(t *testing.T) {
	if !timersReadable {
		t.Skip("timers are read on Go 1.26 only")
	}
	armed := time.AfterFunc(time.Hour, func() {})
	if !afterFuncArmed(armed) || !armed.Stop() || afterFuncArmed(armed) {
		t.Fatal("afterFuncArmed does not read the runtime's timer: its layout changed")
	}
	body := func(early *bool) func(t *testing.T) {
		return func(t *testing.T) {
			fired := false
			AfterFunc(time.Millisecond, func() { fired = true })
			for range 3 {
				Gosched()
			}
			*early = fired
		}
	}
	for _, early := range []bool{false, true} {
		seen := map[bool]bool{}
		// PCT too: the stand-ins of timers number like goroutines (PCT
		// keeps its state by number).
		pct := sched.NewPCT(3, 0, 1)
		for seed := range uint64(30) {
			for _, s := range []sched.Strategy{sched.Random(seed), pct} {
				cfg := Config{EarlyTimers: early, Strategy: s}
				var fired bool
				s, err := Run(t, cfg, body(&fired))
				if err != nil {
					t.Fatalf("early %v, seed %d: %v", early, seed, err)
				}
				seen[fired] = true
				for range 3 {
					var again bool
					if err := ReplayWith(t, cfg, s, body(&again)); err != nil || again != fired {
						t.Fatalf("early %v, seed %d: replay %v, fired %v then %v", early, seed, err, fired, again)
					}
				}
			}
		}
		if seen[true] != early || !seen[false] {
			t.Errorf("early %v: callback before the body's end seen %v", early, seen)
		}
	}
}

// TestEarlyTime: the virtual time that passes while a goroutine could run
// (a timer fired early) is counted by EarlyTime, and only that: without
// EarlyTimers it stays 0, time that passes once every goroutine is
// blocked is not counted, nor time that passes while only goroutines
// marked as the harness's could run.
func TestEarlyTime(t *testing.T) {
	if !timersReadable {
		t.Skip("timers are read on Go 1.26 only")
	}
	type obs struct{ busy, busyEarly, end, endEarly time.Duration }
	body := func(harness bool, o *obs) func(t *testing.T) {
		return func(t *testing.T) {
			if Harness(harness) {
				t.Error("a goroutine starts unmarked")
			}
			t0 := time.Now()
			// No yield point after the sleep: once it ends, nothing but
			// this goroutine's exit can run while the body sleeps.
			Go(func() { Sleep(time.Second) })
			// Always runnable: any time that passes here passed early.
			for range 20 {
				Gosched()
			}
			o.busy, o.busyEarly = time.Since(t0), EarlyTime()
			Sleep(5 * time.Second) // every goroutine blocked: not early
			o.end, o.endEarly = time.Since(t0), EarlyTime()
		}
	}
	for _, mode := range []struct{ early, harness bool }{{false, false}, {true, false}, {true, true}} {
		sawEarly := false
		for seed := range uint64(40) {
			var o obs
			cfg := Config{EarlyTimers: mode.early, Strategy: sched.Random(seed)}
			s, err := Run(t, cfg, body(mode.harness, &o))
			if err != nil {
				t.Fatalf("%+v, seed %d: %v", mode, seed, err)
			}
			want := o.busy
			if mode.harness {
				want = 0
			}
			if o.busyEarly != want || o.endEarly != o.busyEarly {
				t.Fatalf("%+v, seed %d: %v passed while the body could run, EarlyTime %v; at the end %v passed, EarlyTime %v", mode, seed, o.busy, o.busyEarly, o.end, o.endEarly)
			}
			if o.end != o.busy+5*time.Second {
				t.Fatalf("%+v, seed %d: the body's sleep took %v", mode, seed, o.end-o.busy)
			}
			if o.busy > 0 {
				sawEarly = true
				var again obs
				if err := ReplayWith(t, cfg, s, body(mode.harness, &again)); err != nil || again != o {
					t.Fatalf("%+v, seed %d: replay %v, %+v then %+v", mode, seed, err, o, again)
				}
			}
		}
		if sawEarly != mode.early {
			t.Errorf("%+v: time passed while the body could run: %v", mode, sawEarly)
		}
	}
	if EarlyTime() != 0 || Harness(true) {
		t.Errorf("outside a run: EarlyTime %v, or Harness marked a goroutine", EarlyTime())
	}
}

// TestEarlyTimeAfterBody: goroutines may go on for Config.LeakAfter after
// the body returned, counted without the time the schedule let pass
// while one of them could run. Here one spins until the other has slept
// 1.2 s: every bit of that sleep passes while the spinner could run, so
// neither is leaked, whatever the schedule.
func TestEarlyTimeAfterBody(t *testing.T) {
	if !timersReadable {
		t.Skip("timers are read on Go 1.26 only")
	}
	body := func(t *testing.T) {
		var slept atomic.Bool
		Go(func() {
			for !slept.Load() {
				Yield()
			}
		})
		Go(func() {
			Sleep(600 * time.Millisecond)
			Sleep(600 * time.Millisecond)
			Yield()
			slept.Store(true)
		})
	}
	for seed := range uint64(30) {
		if _, err := Run(t, Config{EarlyTimers: true, Strategy: sched.Random(seed)}, body); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestScheduleKeepsEarlyTimers: a saved schedule says whether its run had
// early timers (ModeComment), and a replay in the mode it says runs so
// whatever the environment says: a run in which a timer fired early
// replays in its schedule's mode with the mode off in the process.
func TestScheduleKeepsEarlyTimers(t *testing.T) {
	if !timersReadable {
		t.Skip("timers are read on Go 1.26 only")
	}
	defer func(was, legacy bool) { earlyFromEnv, earlyLegacy = was, legacy }(earlyFromEnv, earlyLegacy)
	body := func(which *int) func(t *testing.T) {
		return func(t *testing.T) {
			ch := make(chan int)
			Go(func() { Sleep(2 * time.Second); Select(true, SendCase(ch, 1)) })
			*which = Select(false, RecvCase(ch), RecvCase(time.After(time.Second)))
		}
	}
	for seed := range uint64(40) {
		earlyFromEnv = true
		var which int
		s, err := Run(t, Config{Strategy: sched.Random(seed), LeakAfter: 10 * time.Second}, body(&which))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if which != 0 {
			continue // the timer fired first: no early time needed
		}
		k, v, _ := strings.Cut(ModeComment(), ": ")
		meta := map[string]string{k: v}
		earlyFromEnv = false
		if err := CheckMode(meta); err != nil || meta[metaEarly] != earlyTests2 {
			t.Fatalf("the schedule's mode %v, %v", meta, err)
		}
		ReplayMode(meta)
		again := -1
		if err := ReplayWith(t, Config{LeakAfter: 10 * time.Second}, s, body(&again)); err != nil || again != 0 {
			t.Fatalf("seed %d: the replay in the schedule's mode: %v, case %d", seed, err, again)
		}
		earlyFromEnv = false
		if err := ReplayWith(t, Config{LeakAfter: 10 * time.Second}, s, body(&again)); !errors.Is(err, sched.ErrDiverged) {
			t.Fatalf("seed %d: replayed without early timers: %v", seed, err)
		}
		return
	}
	t.Fatal("no run in which the slow goroutine sent first")
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
