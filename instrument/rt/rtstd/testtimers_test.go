package rtstd

import (
	"context"
	"testing"
	"time"
)

// TestContextTimerFound: the timer of a context made by WithTimeout is
// found (the context package keeps it in timerCtx.timer), pending until
// the context is cancelled; a context whose parent's deadline comes
// first has none of its own.
func TestContextTimerFound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if p := contextTimer(ctx); p == nil || !p.Stop() {
		t.Fatalf("no pending timer found in %T", ctx)
	}
	done, cancel2 := context.WithTimeout(context.Background(), time.Hour)
	p := contextTimer(done)
	cancel2()
	if p == nil || p.Stop() {
		t.Errorf("the timer of a cancelled context is still pending (or none found)")
	}
	inner, cancel3 := context.WithTimeout(ctx, 2*time.Hour)
	defer cancel3()
	if contextTimer(inner) != nil || contextTimer(context.Background()) != nil {
		t.Errorf("a context without a timer of its own has one")
	}
}
