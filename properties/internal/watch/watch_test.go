package watch

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestCaseEnds(t *testing.T) {
	never := make(chan struct{})
	closed := make(chan struct{})
	close(closed)
	var clock atomic.Uint64
	noLate := func(time.Duration) {}
	far := time.Now().Add(time.Minute)
	if got := Case(closed, never, clock.Load, noLate, time.Second, far); got != Done {
		t.Errorf("a case that is done: %v", got)
	}
	if got := Case(never, closed, clock.Load, noLate, time.Second, far); got != Violation {
		t.Errorf("a case that shows a violation: %v", got)
	}
	// Nothing moves and nothing else can run: a hang, after about idle.
	start := time.Now()
	if got := Case(never, never, clock.Load, noLate, 40*time.Millisecond, far); got != Hang {
		t.Errorf("a case that does not move: %v", got)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("hang called after %v, before the idle time", d)
	}
	// A case that keeps moving is not a hang until its deadline.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				clock.Add(1)
			}
		}
	}()
	start = time.Now()
	if got := Case(never, never, clock.Load, noLate, 40*time.Millisecond, time.Now().Add(300*time.Millisecond)); got != Hang || time.Since(start) < 300*time.Millisecond {
		t.Errorf("a moving case: %v after %v, want a hang at its deadline", got, time.Since(start))
	}
}

func TestStacksBounded(t *testing.T) {
	all := Stacks(1 << 20)
	if !strings.HasPrefix(all, "goroutine ") {
		t.Fatalf("not a stack dump: %.80q", all)
	}
	if cut := Stacks(10); len(cut) > 10+len("\n… (more goroutines, not shown)\n") || !strings.HasSuffix(cut, "not shown)\n") {
		t.Errorf("cut to 10 bytes: %q", cut)
	}
}
