package stdsync

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control"
	"stdsync/helper"
)

// lostUpdate runs two Incr at once and returns the count.
func lostUpdate() int {
	var c helper.Counter
	done := make(chan bool)
	for range 2 {
		go func() {
			c.Incr()
			done <- true
		}()
	}
	<-done
	<-done
	return c.N()
}

func inversion() {
	var x helper.Accounts
	done := make(chan bool)
	go func() { x.AB(); done <- true }()
	go func() { x.BA(); done <- true }()
	<-done
	<-done
}

// TestStd checks what STDSYNC_WANT says: "controlled" (the overlay is
// linked: the lost update and the deadlock are found and replay exactly,
// the pipeline is right under every schedule) or "free" (without it the
// helper's locks are no yield points: neither is ever found).
//
//execspec:nocontrol
func TestStd(t *testing.T) {
	controlled := os.Getenv("STDSYNC_WANT") == "controlled"
	if rt.StdSync() != controlled {
		t.Fatalf("rt.StdSync() = %v, want %v", rt.StdSync(), controlled)
	}
	const seeds = 200
	lost, deadlocks := -1, -1
	for seed := range uint64(seeds) {
		for _, s := range []control.Strategy{control.Random(seed), control.NewPCT(3, 0, seed)} {
			var got int
			sc, err := rt.Run(t, rt.Config{Strategy: s}, func(*testing.T) { got = lostUpdate() })
			if err != nil {
				t.Fatalf("lost update, seed %d: %v", seed, err)
			}
			if got != 2 && lost < 0 {
				lost = int(seed)
				for i := range 10 {
					var again int
					if err := rt.Replay(t, sc, func(*testing.T) { again = lostUpdate() }); err != nil || again != got {
						t.Fatalf("replay %d of the lost update: %d, %v; want %d", i, again, err, got)
					}
				}
			}
			sc, err = rt.Run(t, rt.Config{Strategy: s}, func(*testing.T) { inversion() })
			if err != nil && deadlocks < 0 {
				var h *rt.HangError
				if !errors.As(err, &h) || !errors.Is(err, rt.ErrDeadlock) {
					t.Fatalf("inversion, seed %d: %v, want a deadlock", seed, err)
				}
				deadlocks = int(seed)
				t.Logf("deadlock found: %v", err)
				for i := range 10 {
					rerr := rt.Replay(t, sc, func(*testing.T) { inversion() })
					if rerr == nil || rerr.Error() != err.Error() {
						t.Fatalf("replay %d of the deadlock: %v; want %v", i, rerr, err)
					}
				}
			}
			var sum int
			sc, err = rt.Run(t, rt.Config{Strategy: s}, func(*testing.T) { sum = helper.Pipeline(4) })
			if err != nil || sum != 20 {
				t.Fatalf("pipeline, seed %d (%T): %d, %v; want 20", seed, s, sum, err)
			}
			if controlled && sc.Steps < 20 {
				t.Fatalf("pipeline, seed %d: %d steps: its sync calls are no yield points", seed, sc.Steps)
			}
		}
	}
	if controlled {
		// A lock held by an uncontrolled goroutine that sleeps: the wait
		// ends soon after it lets go in virtual time (not at the
		// scheduler's horizon, an hour), and no leak is reported.
		for seed := range uint64(20) {
			var waited time.Duration
			_, err := rt.Run(t, rt.Config{Strategy: control.Random(seed)}, func(*testing.T) {
				var h helper.Held
				h.Hold(10 * time.Millisecond)
				start := time.Now()
				h.Touch()
				waited = time.Since(start)
			})
			if err != nil || waited < 10*time.Millisecond || waited > 100*time.Millisecond {
				t.Fatalf("seed %d: waited %v for a lock held 10ms (%v)", seed, waited, err)
			}
		}
	}
	t.Logf("lost update first at seed %d, deadlock at seed %d", lost, deadlocks)
	if controlled && (lost < 0 || deadlocks < 0) {
		t.Fatalf("under control: lost update at seed %d, deadlock at seed %d (-1: not found in %d seeds)", lost, deadlocks, seeds)
	}
	if !controlled && (lost >= 0 || deadlocks >= 0) {
		t.Fatalf("without the overlay the helper's locks are no yield points, yet: lost update at seed %d, deadlock at seed %d", lost, deadlocks)
	}
}
