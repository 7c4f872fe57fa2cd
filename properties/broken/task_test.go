package broken_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/broken"
)

// TestDoubleEnqueueCompletesOnce: the double-enqueue defect polls a task
// twice after a wake while it was QUEUED; the future returns Ready both
// times. The defect is for the checks to find in the trace: the second
// completion must not crash the process (it closed the task's done
// channel twice), and Wait must still return.
func TestDoubleEnqueueCompletesOnce(t *testing.T) {
	var ex executor.Executor
	for _, b := range broken.Catalogue() {
		if b.Name == "double-enqueue" {
			ex = b.New()
		}
	}
	if ex == nil {
		t.Fatal("double-enqueue is not in the catalogue")
	}
	ready := executor.FutureFunc(func(*executor.Context) (any, bool) { return nil, true })
	for range 20 {
		if _, err := ex.Spawn(ready); err != nil {
			t.Fatal(err)
		}
	}
	var waker atomic.Pointer[executor.Waker]
	var polls atomic.Int32
	b, err := ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
		if polls.Add(1) == 1 {
			w := cx.Waker()
			waker.Store(&w)
			return nil, false
		}
		return "b", true
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) {
		if w := waker.Load(); w != nil {
			w.Wake()
			w.Wake()
		}
		return nil, true
	})); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ex.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return")
	}
	if v, err := b.Join(); err != nil || v != "b" {
		t.Fatalf("Join: %v, %v; want b, nil", v, err)
	}
	if n := polls.Load(); n < 3 {
		t.Fatalf("the woken task was polled %d times; the defect polls it 3 times (one worker, FIFO: B parks before A wakes it twice)", n)
	}
}
