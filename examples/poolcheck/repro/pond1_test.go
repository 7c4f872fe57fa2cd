package repro

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/alitto/pond"
)

// TestPond1StopAfterCancel: pond v1, a pool whose parent context
// (pond.Context) is cancelled, then a task is submitted, then
// StopAndWait. At v1.9.2 the workers leave on the cancellation after a
// non-blocking drain of the queue, so a task queued later is never
// drained and StopAndWait, which waits for every queued task, never
// returns; at v1.9.1 the draining workers stay until the queue is closed.
//
//	POOLCHECK_REPRO=1 go test -run Pond1StopAfterCancel -v .
func TestPond1StopAfterCancel(t *testing.T) {
	if os.Getenv("POOLCHECK_REPRO") == "" {
		t.Skip("set POOLCHECK_REPRO=1")
	}
	const trials = 20
	hung := 0
	for range trials {
		ctx, cancel := context.WithCancel(context.Background())
		p := pond.New(1, 4, pond.Context(ctx))
		p.Submit(func() {})
		cancel()
		time.Sleep(10 * time.Millisecond) // the worker sees the cancellation
		p.Submit(func() {})
		done := make(chan struct{})
		go func() { p.StopAndWait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			hung++ // leaks the stuck StopAndWait
		}
	}
	t.Logf("pond: StopAndWait hung in %d of %d trials", hung, trials)
	if hung > 0 {
		t.Errorf("StopAndWait hung after the pool's context was cancelled in %d of %d trials", hung, trials)
	}
}
