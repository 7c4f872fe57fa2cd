package executor_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/execspec/execspec/executor"
)

// TestKitContract: an executor on a Kit keeps the Executor contract: bad
// use is an error, Wait and Join from inside a task are ErrWaitInTask, a
// panic, a Failed value and a Goexit fail their task and nothing else, a
// wake during a poll is not lost, and a second Close is ErrClosed.
func TestKitContract(t *testing.T) {
	e := newUnmarkedFIFO(2)
	k := e.kit
	if _, err := k.Spawn(nil); !errors.Is(err, executor.ErrNilFuture) {
		t.Errorf("Spawn(nil) = %v, want ErrNilFuture", err)
	}
	var inside []error
	var mu sync.Mutex
	self := 0
	errBoom := errors.New("boom")
	hs := map[string]executor.Handle{}
	for name, f := range map[string]executor.FutureFunc{
		"value": func(cx *executor.Context) (any, bool) { return 7, true },
		"failed": func(cx *executor.Context) (any, bool) {
			return executor.Failed{Err: errBoom}, true
		},
		"panic":  func(cx *executor.Context) (any, bool) { panic("p") },
		"goexit": func(cx *executor.Context) (any, bool) { runtime.Goexit(); return nil, true },
		"inside": func(cx *executor.Context) (any, bool) {
			mu.Lock()
			defer mu.Unlock()
			inside = append(inside, k.Wait())
			if h := hs["value"]; h != nil {
				_, err := h.Join()
				inside = append(inside, err)
			}
			return nil, true
		},
		"self-wake": func(cx *executor.Context) (any, bool) {
			self++
			if self < 3 {
				cx.Waker().Wake()
				return nil, false
			}
			return "woke", true
		},
	} {
		h, err := k.Spawn(f)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		hs[name] = h
		mu.Unlock()
	}
	if err := k.Wait(); err != nil {
		t.Fatal(err)
	}
	if v, err := hs["value"].Join(); v != 7 || err != nil {
		t.Errorf("value: Join = (%v, %v)", v, err)
	}
	if _, err := hs["failed"].Join(); !errors.Is(err, errBoom) {
		t.Errorf("failed: Join error %v, want one wrapping boom", err)
	}
	var pe *executor.PanicError
	if _, err := hs["panic"].Join(); !errors.As(err, &pe) || pe.Value != "p" {
		t.Errorf("panic: Join error %v, want a PanicError", err)
	}
	if _, err := hs["goexit"].Join(); !errors.As(err, &pe) || pe.Value != executor.ErrGoexit {
		t.Errorf("goexit: Join error %v, want a PanicError with ErrGoexit", err)
	}
	if v, err := hs["self-wake"].Join(); v != "woke" || err != nil || self != 3 {
		t.Errorf("self-wake: Join = (%v, %v) after %d polls, want woke after 3", v, err, self)
	}
	for _, err := range inside {
		if !errors.Is(err, executor.ErrWaitInTask) {
			t.Errorf("from inside a task: %v, want ErrWaitInTask", err)
		}
	}
	if len(inside) == 0 {
		t.Error("the inside task did not run")
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); !errors.Is(err, executor.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if _, err := k.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { return nil, true })); !errors.Is(err, executor.ErrClosed) {
		t.Errorf("Spawn after Close = %v, want ErrClosed", err)
	}
}

// TestTaskState: the transitions of the state word, as the rules say.
func TestTaskState(t *testing.T) {
	var s executor.TaskState
	if s.Load() != executor.Idle {
		t.Fatalf("zero state %v", s.Load())
	}
	s.Spawn()
	if s.Wake() || s.Load() != executor.Queued {
		t.Errorf("a wake of a QUEUED task must coalesce: %v", s.Load())
	}
	if !s.Take() || s.Take() {
		t.Errorf("Take: QUEUED → RUNNING once")
	}
	if s.Wake() || s.Load() != executor.Notified {
		t.Errorf("a wake while RUNNING: %v, want NOTIFIED", s.Load())
	}
	if !s.Suspend() || s.Load() != executor.Queued {
		t.Errorf("Suspend of a NOTIFIED task must re-queue: %v", s.Load())
	}
	s.Take()
	if s.Suspend() || s.Load() != executor.Waiting {
		t.Errorf("Suspend: %v, want WAITING", s.Load())
	}
	if !s.Wake() || s.Load() != executor.Queued {
		t.Errorf("a wake of a WAITING task must queue it: %v", s.Load())
	}
	s.Take()
	s.Complete()
	if s.Wake() || s.Take() || s.Load() != executor.Done {
		t.Errorf("DONE is final: %v", s.Load())
	}
}
