package poolcheck

import (
	"testing"
	"time"

	"github.com/alitto/pond/v2"

	"github.com/execspec/execspec/properties/pool"
)

// newPond adapts a pond pool: Submit is Go (which refuses tasks after the
// pool stopped), Close is StopAndWait.
func newPond(capacity int) func() pool.Pool {
	return func() pool.Pool {
		p := pond.NewPool(capacity)
		return pool.Func(p.Go, func() error { p.StopAndWait(); return nil })
	}
}

// TestPondProperties runs every pool property on workloads drawn by rapid,
// some tasks ending in runtime.Goexit.
func TestPondProperties(t *testing.T) {
	pool.Check(t, newPond(2), pool.Config{Capacity: 2, MaxSubmitters: 4, Goexit: true, Timeout: 2 * time.Second})
}

// TestPondGoexit aims at pond issue #135: a task that calls runtime.Goexit
// (as t.FailNow and gomock do) ended its worker goroutine without the
// worker's bookkeeping, and StopAndWait then waited forever.
func TestPondGoexit(t *testing.T) {
	w := pool.Workload{Submitters: 1, Tasks: []pool.Task{
		{Work: pool.WorkNone}, {Work: pool.WorkGoexit}, {Work: pool.WorkNone},
	}}
	if err := pool.RunWorkload(newPond(2), w, pool.Config{Capacity: 2, Timeout: 2 * time.Second}); err != nil {
		t.Error(err)
	}
}
