package timers

import (
	"context"
	"testing"
	"time"
)

// The timers a test's own code creates are the test's (the testtimer
// rule): the runtime never fires them early.
func TestGuard(t *testing.T) {
	done := make(chan bool, 1)
	time.AfterFunc(time.Millisecond, func() { done <- true })
	time.Sleep(time.Microsecond)
	timer := time.NewTimer(time.Second)
	defer timer.Stop()
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	after := time.After
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, stop := context.WithDeadline(ctx, time.Now())
	stop()
	_, stop = context.WithCancel(ctx) // not a timer: left as it is
	stop()
	_ = time.Since(time.Now())
	select {
	case <-done:
	case <-timer.C:
		t.Fatal("timeout")
	case <-tick.C:
	case <-time.Tick(time.Hour):
	case <-after(time.Minute):
	case <-ctx.Done():
	}
}
