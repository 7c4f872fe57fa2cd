// Package semaphore checks golang.org/x/sync/semaphore with execspec's pool
// properties through an adapter that uses only its documented API (see
// ../README.md for the versions and the bugs).
package semaphore

import (
	"context"
	"sync"
	"testing"

	"golang.org/x/sync/semaphore"

	"github.com/execspec/execspec/properties/pool"
)

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
	pool.Library{Module: "golang.org/x/sync", Func: semaphore.NewWeighted}.Check(t, pool.Target{New: newSemaphore, Config: semaphoreConfig})
}
