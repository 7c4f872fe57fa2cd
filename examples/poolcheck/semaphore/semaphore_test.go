// Package semaphore checks golang.org/x/sync/semaphore with execspec's pool
// properties through an adapter that uses only its documented API (see
// ../README.md for the versions and the bugs).
package semaphore

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/sync/semaphore"

	"github.com/execspec/execspec/properties/pool"
)

// cases is the number of cases per check: POOLCHECK_CASES, default 100.
func cases() int {
	if n, err := strconv.Atoi(os.Getenv("POOLCHECK_CASES")); err == nil && n > 0 {
		return n
	}
	return 100
}

// seed seeds the drawn cases: POOLCHECK_SEED, default 1; other seeds draw
// other cases (for long runs in several parts).
func seed() uint64 {
	if n, err := strconv.ParseUint(os.Getenv("POOLCHECK_SEED"), 10, 64); err == nil {
		return n
	}
	return 0
}

// newSemaphore adapts the worker pool of x/sync/semaphore's documentation:
// acquire the task's weight (giving up when the context is done), run it
// on a goroutine, release. Close waits for the goroutines.
func newSemaphore(o pool.Options) pool.Pool {
	sem := semaphore.NewWeighted(int64(o.Capacity))
	var wg sync.WaitGroup
	submit := func(ctx context.Context, w int, f func()) error {
		if err := sem.Acquire(ctx, int64(w)); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sem.Release(int64(w))
			f()
		}()
		return nil
	}
	return &pool.Adapter{
		SubmitFunc:         func(f func()) error { return submit(context.Background(), 1, f) },
		SubmitWeightedFunc: submit,
		CloseFunc:          func() error { wg.Wait(); return nil },
	}
}

var semaphoreConfig = pool.Config{
	Space:      pool.Space{Capacity: [2]int{1, 6}},
	RefuseDone: true,
	Goexit:     true,
}

func TestSemaphore(t *testing.T) {
	cfg := semaphoreConfig
	cfg.Cases = cases()
	cfg.Seed = seed()
	pool.CheckOptions(t, newSemaphore, cfg)
}
