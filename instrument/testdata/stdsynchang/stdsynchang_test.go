package stdsynchang

import (
	"errors"
	"strings"
	"testing"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control"
	"stdsynchang/helper"
)

// holdWhileContended takes the helper's lock on a controlled goroutine,
// lets the helper's own goroutine contend for it, passes yield points
// while it holds it (another controlled goroutine runs), then lets go:
// the count is 11 under every schedule.
func holdWhileContended() int {
	var s helper.Shared
	s.Lock()
	done := s.Contend()
	ch := make(chan int)
	go func() { ch <- 10 }()
	s.Add(<-ch)
	s.Unlock()
	<-done
	return s.N()
}

// readersAndWriter: the helper's goroutine takes an RWMutex as writer
// while a controlled goroutine reads, then as reader while one writes.
func readersAndWriter() int {
	var x helper.RW
	x.RLock()
	done := x.Contend()
	ch := make(chan int)
	go func() { ch <- 10 }()
	v := <-ch
	x.RUnlock()
	x.Lock()
	go func() { ch <- 0 }()
	x.Add(v + <-ch)
	x.Unlock()
	<-done
	return x.N()
}

// holdForever takes the lock and waits for the helper's goroutine, which
// waits for the lock: everyone is blocked. When the run is stopped the
// deferred Unlock lets the helper's goroutine end (a goroutine that is
// not controlled cannot be unwound).
func holdForever() {
	var s helper.Shared
	s.Lock()
	defer s.Unlock()
	<-s.Contend()
}

//execspec:nocontrol
func TestHang(t *testing.T) {
	if !rt.StdSync() {
		t.Fatal("built without the overlay of sync")
	}
	for seed := range uint64(50) {
		for _, s := range []control.Strategy{control.Random(seed), control.NewPCT(3, 0, seed)} {
			var got int
			sc, err := rt.Run(t, rt.Config{Strategy: s}, func(*testing.T) { got = holdWhileContended() })
			if err != nil || got != 11 {
				t.Fatalf("seed %d (%T): %d, %v; want 11", seed, s, got, err)
			}
			for range 3 {
				var again int
				if err := rt.Replay(t, sc, func(*testing.T) { again = holdWhileContended() }); err != nil || again != 11 {
					t.Fatalf("replay of seed %d (%T): %d, %v", seed, s, again, err)
				}
			}
			sc, err = rt.Run(t, rt.Config{Strategy: s}, func(*testing.T) { got = readersAndWriter() })
			if err != nil || got != 11 {
				t.Fatalf("RWMutex, seed %d (%T): %d, %v; want 11", seed, s, got, err)
			}
			if err := rt.Replay(t, sc, func(*testing.T) { got = readersAndWriter() }); err != nil || got != 11 {
				t.Fatalf("replay of RWMutex seed %d (%T): %d, %v", seed, s, got, err)
			}
			sc, err = rt.Run(t, rt.Config{Strategy: s}, func(*testing.T) { holdForever() })
			var h *rt.HangError
			if !errors.As(err, &h) || !errors.Is(err, rt.ErrDeadlock) || !strings.Contains(err.Error(), "uncontrolled goroutine: Mutex.Lock at ") || !strings.Contains(err.Error(), "helper.go:") {
				t.Fatalf("hold forever, seed %d: %v; want a deadlock naming the helper's goroutine in Mutex.Lock", seed, err)
			}
			if seed == 0 {
				t.Logf("%v", err)
			}
			if rerr := rt.Replay(t, sc, func(*testing.T) { holdForever() }); rerr == nil || rerr.Error() != err.Error() {
				t.Fatalf("replay of the deadlock: %v; want %v", rerr, err)
			}
		}
	}
}

// TestWithoutOverlay: built without the overlay, the helper's goroutine
// waits for the lock in the runtime's semaphore, which synctest does not
// count as blocked: the scheduler's settling cannot end, and the
// watchdog (EXECSPEC_SETTLE_LIMIT) stops the binary naming it.
//
//execspec:nocontrol
func TestWithoutOverlay(t *testing.T) {
	if rt.StdSync() {
		t.Fatal("built with the overlay of sync")
	}
	rt.Run(t, rt.Config{Strategy: control.Random(1)}, func(*testing.T) { holdWhileContended() })
	t.Fatal("the run ended")
}
