// Package poolcheck checks a real goroutine pool library, ants, with
// execspec's pool properties, at a version with a published capacity race
// (v2.11.3) and at the version that fixed it (v2.11.4). See README.md.
package poolcheck

import (
	"errors"
	"testing"
	"time"

	"github.com/panjf2000/ants/v2"

	"github.com/execspec/execspec/properties/pool"
	"github.com/execspec/execspec/properties/stress"
)

// newAnts adapts an ants pool of the given capacity: Submit is ants'
// Submit, Close is ReleaseTimeout, which waits for every worker to exit.
func newAnts(capacity int) func() pool.Pool {
	return func() pool.Pool {
		p, err := ants.NewPool(capacity)
		if err != nil {
			panic(err)
		}
		return pool.Func(p.Submit, func() error { return p.ReleaseTimeout(10 * time.Second) })
	}
}

// TestAntsProperties runs every pool property on workloads drawn by rapid.
func TestAntsProperties(t *testing.T) {
	pool.Check(t, newAnts(2), pool.Config{Capacity: 2, MaxSubmitters: 8, Pin: true})
}

// TestAntsCapacityRace aims at the race of ants issue #374: retrieveWorker
// released the pool's lock after checking Running() < Cap() and before the
// new worker incremented Running, so concurrent Submits could all pass the
// check and run more tasks at once than the capacity. The race can only
// happen while a fresh pool spawns its workers, so each repetition is a
// fresh pool, with two submitters pinned to distinct CPUs and started
// together, and tasks that sleep long enough to overlap.
func TestAntsCapacityRace(t *testing.T) {
	const runs = 300
	w := pool.Workload{Submitters: 2}
	for range 4 {
		w.Tasks = append(w.Tasks, pool.Task{Work: pool.WorkSleep, Amount: 300})
	}
	failed, first := stress.RepeatAll(runs, func(int) error {
		return pool.RunWorkload(newAnts(2), w, pool.Config{Capacity: 2, Pin: true})
	})
	if failed > 0 {
		var f *pool.Finding
		if errors.As(first, &f) {
			t.Errorf("property %s violated in %d of %d runs; first: %v", f.Property, failed, runs, first)
		} else {
			t.Errorf("%d of %d runs failed; first: %v", failed, runs, first)
		}
	}
}
