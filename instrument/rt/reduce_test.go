package rt_test

import (
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/instrument/rt/rtstd"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/properties/control/sched"
)

// A loop that only yields (GoschedLoop, the rewriter's goschedloop rule)
// yields once under control; a schedule of format version 1, made when it
// yielded at every iteration, replays with it doing so, and a version 1
// schedule read from a file stays version 1.
func TestGoschedLoopVersions(t *testing.T) {
	body := func(*testing.T) {
		for i := 0; i < 5; i++ {
			if rt.GoschedLoop() {
				break
			}
		}
	}
	sc, err := rt.Run(t, rt.Config{}, body)
	if err != nil || sc.Steps != 1 || sc.Version != 0 {
		t.Fatalf("the loop took %d steps (version %d), want 1: %v", sc.Steps, sc.Version, err)
	}
	old, err := rt.Run(t, rt.Config{Strategy: sched.NewReplay(sched.Schedule{Version: 1})}, body)
	if err != nil || old.Steps != 5 || old.Version != 1 {
		t.Fatalf("replaying version 1 the loop took %d steps (version %d), want 5: %v", old.Steps, old.Version, err)
	}
	path := filepath.Join(t.TempDir(), "v1.schedule")
	if err := old.SaveCommented(path, []string{"case: 1"}); err != nil {
		t.Fatal(err)
	}
	loaded, err := sched.Load(path)
	if err != nil || loaded.Version != 1 {
		t.Fatalf("loaded version %d: %v", loaded.Version, err)
	}
	if err := rt.Replay(t, loaded, body); err != nil {
		t.Fatalf("the version 1 schedule does not replay: %v", err)
	}
	loaded.Version = 0
	if err := rt.Replay(t, loaded, body); !errors.Is(err, sched.ErrDiverged) {
		t.Fatalf("its choices replayed as version 2: %v", err)
	}
}

// spinLock is ants' spin lock as the rewriter writes it (rules spincas
// and goschedloop).
type spinLock uint32

func (sl *spinLock) Lock() {
	backoff := 1
	for !rt.Then(rt.SpinCAS(func() bool { return atomic.LoadUint32((*uint32)(sl)) == 0 }), atomic.CompareAndSwapUint32((*uint32)(sl), 0, 1)) {
		for i := 0; i < backoff; i++ {
			if rt.GoschedLoop() {
				break
			}
		}
		if backoff < 16 {
			backoff <<= 1
		}
	}
}

func (sl *spinLock) Unlock() {
	rt.Yield()
	atomic.StoreUint32((*uint32)(sl), 0)
}

// A spin loop under control waits until its CAS would succeed: the
// critical sections still exclude each other and every increment is
// kept, a run never spins (no yield of the backoff is a step), and a
// lock nobody releases is a deadlock that names the spin, where the
// loop as written spun to the step budget.
func TestSpinCASWaits(t *testing.T) {
	for seed := range uint64(30) {
		var sl spinLock
		n, inside := 0, int32(0)
		sc, err := rt.Run(t, rt.Config{Strategy: control.Random(seed)}, func(*testing.T) {
			var wg rtstd.WaitGroup
			for range 3 {
				wg.Add(1)
				rt.Go(func() {
					defer wg.Done()
					for range 3 {
						sl.Lock()
						if rt.Then(rt.Yield(), atomic.AddInt32(&inside, 1)) != 1 {
							panic("two goroutines inside the spin lock")
						}
						n++
						rt.Then(rt.Yield(), atomic.AddInt32(&inside, -1))
						sl.Unlock()
					}
				})
			}
			wg.Wait()
		})
		if err != nil || n != 9 {
			t.Fatalf("seed %d: %d increments: %v", seed, n, err)
		}
		// Per lock: the CAS, the two atomics and the unlock; per
		// goroutine: Go, Done; and the body's Wait.
		if want := 9*4 + 3*2 + 1; sc.Steps != want {
			t.Fatalf("seed %d: %d steps, want %d (no spinning)", seed, sc.Steps, want)
		}
	}
	var sl spinLock
	_, err := rt.Run(t, rt.Config{}, func(*testing.T) {
		sl.Lock()
		sl.Lock()
	})
	var h *rt.HangError
	if !errors.As(err, &h) || h.Leak || len(h.Blocked) != 1 || !strings.Contains(h.Blocked[0].Op, "spin") {
		t.Fatalf("a lock never released: %v", err)
	}
	// Replaying a version 1 schedule, the loop spins as written: to the
	// step budget.
	_, err = rt.Run(t, rt.Config{Strategy: sched.NewReplay(sched.Schedule{Version: 1}), MaxSteps: 500}, func(*testing.T) {
		sl := new(spinLock)
		sl.Lock()
		sl.Lock()
	})
	if !errors.Is(err, sched.ErrBudget) {
		t.Fatalf("version 1: %v", err)
	}
}

// A spin that an uncontrolled goroutine ends (it stores to the lock word
// after a sleep) is no deadlock: the external phase looks at it again.
func TestSpinCASReleasedOutside(t *testing.T) {
	var sl spinLock
	_, err := rt.Run(t, rt.Config{}, func(*testing.T) {
		sl.Lock()
		go func() { // uncontrolled
			time.Sleep(10 * time.Millisecond)
			atomic.StoreUint32((*uint32)(&sl), 0)
		}()
		sl.Lock()
		sl.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
}
