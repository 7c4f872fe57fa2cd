package executor

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execspec/execspec/traces"
)

func forEachBuiltin(t *testing.T, f func(t *testing.T, newEx func() Executor)) {
	for _, name := range BuiltinNames() {
		newEx, _ := Builtin(name)
		t.Run(name, func(t *testing.T) { f(t, newEx) })
	}
}

func ready(v any) Future { return FutureFunc(func(*Context) (any, bool) { return v, true }) }

func TestNilFuture(t *testing.T) {
	forEachBuiltin(t, func(t *testing.T, newEx func() Executor) {
		ex := newEx()
		if _, err := ex.Spawn(nil); !errors.Is(err, ErrNilFuture) {
			t.Fatalf("Spawn(nil) = %v, want ErrNilFuture", err)
		}
		if _, err := ex.Spawn(FutureFunc(nil)); !errors.Is(err, ErrNilFuture) {
			t.Fatalf("Spawn(FutureFunc(nil)) = %v, want ErrNilFuture", err)
		}
		if err := ex.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSpawnAfterCloseAndCloseTwice(t *testing.T) {
	forEachBuiltin(t, func(t *testing.T, newEx func() Executor) {
		ex := newEx()
		h, err := ex.Spawn(ready(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := ex.Close(); err != nil {
			t.Fatal(err)
		}
		if v, err := h.Join(); v != 1 || err != nil {
			t.Fatalf("Join after Close = %v, %v; Close must wait for spawned tasks", v, err)
		}
		if _, err := ex.Spawn(ready(2)); !errors.Is(err, ErrClosed) {
			t.Fatalf("Spawn after Close = %v, want ErrClosed", err)
		}
		if err := ex.Close(); !errors.Is(err, ErrClosed) {
			t.Fatalf("second Close = %v, want ErrClosed", err)
		}
	})
}

func TestPanicKeepsRunning(t *testing.T) {
	forEachBuiltin(t, func(t *testing.T, newEx func() Executor) {
		ex := newEx()
		rec := &traces.Log{}
		if m, ok := ex.(*Monitored); ok {
			m.SetRecorder(rec)
		} else {
			ex.(Reporter).SetRecorder(rec)
		}
		h, err := ex.Spawn(FutureFunc(func(*Context) (any, bool) { panic("boom") }))
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Join()
		var pe *PanicError
		if !errors.As(err, &pe) || pe.Value != "boom" || !strings.Contains(string(pe.Stack), "misuse_test.go") {
			t.Fatalf("Join = %v, want *PanicError boom with the stack of the panic", err)
		}
		h2, err := ex.Spawn(ready(7))
		if err != nil {
			t.Fatal(err)
		}
		if v, err := h2.Join(); v != 7 || err != nil {
			t.Fatalf("after a panic, Join = %v, %v", v, err)
		}
		if err := ex.Close(); err != nil {
			t.Fatal(err)
		}
		var sawPanic bool
		for _, e := range rec.Events() {
			if e.Kind == traces.KindPanic && e.Task == pe.Task && strings.Contains(e.Detail, "boom") && strings.Contains(e.Detail, "misuse_test.go") {
				sawPanic = true
			}
		}
		if !sawPanic {
			t.Fatal("no Panic event with the value and the stack")
		}
	})
}

func TestFailedValue(t *testing.T) {
	forEachBuiltin(t, func(t *testing.T, newEx func() Executor) {
		ex := newEx()
		cause := errors.New("no luck")
		h, _ := ex.Spawn(ready(Failed{cause}))
		_, err := h.Join()
		var fe *FailedError
		if !errors.Is(err, cause) || !errors.As(err, &fe) {
			t.Fatalf("Join = %v, want a FailedError wrapping the cause", err)
		}
		ex.Close()
	})
}

func TestLateWakeCounted(t *testing.T) {
	ex := NewWorkSteal(WorkStealConfig{})
	var w Waker
	h, _ := ex.Spawn(FutureFunc(func(cx *Context) (any, bool) { w = cx.Waker(); return 1, true }))
	h.Join()
	w.Wake()
	w.Clone().Wake()
	if n := ex.LateWakes(); n != 2 {
		t.Fatalf("LateWakes = %d, want 2", n)
	}
	ex.Close()
}

// TestWaitInTask: Wait, Close and Join from inside a task return
// ErrWaitInTask instead of deadlocking the worker.
func TestWaitInTask(t *testing.T) {
	forEachBuiltin(t, func(t *testing.T, newEx func() Executor) {
		ex := newEx()
		other, _ := ex.Spawn(ready(0))
		var errs [3]error
		h, err := ex.Spawn(FutureFunc(func(*Context) (any, bool) {
			errs[0] = ex.Wait()
			errs[1] = ex.Close()
			_, errs[2] = other.Join()
			return nil, true
		}))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { h.Join(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("deadlock")
		}
		for i, err := range errs {
			if !errors.Is(err, ErrWaitInTask) {
				t.Errorf("call %d from inside a task = %v, want ErrWaitInTask", i, err)
			}
		}
		if err := ex.Close(); err != nil {
			t.Fatalf("Close after the refused one = %v", err)
		}
	})
}

// TestHandleAwait: a task awaits another task's handle and is woken when it
// completes, also when it failed.
func TestHandleAwait(t *testing.T) {
	forEachBuiltin(t, func(t *testing.T, newEx func() Executor) {
		ex := newEx()
		var release atomic.Bool
		var slowWaker atomic.Value
		slow, _ := ex.Spawn(FutureFunc(func(cx *Context) (any, bool) {
			if release.Load() {
				panic("late failure")
			}
			slowWaker.Store(cx.Waker())
			return nil, false
		}))
		waiter, _ := ex.Spawn(FutureFunc(func(cx *Context) (any, bool) {
			return slow.Poll(cx)
		}))
		for slowWaker.Load() == nil {
			time.Sleep(time.Millisecond)
		}
		release.Store(true)
		slowWaker.Load().(Waker).Wake()
		v, err := waiter.Join()
		var pe *PanicError
		if err != nil || !errors.As(v.(error), &pe) {
			t.Fatalf("awaiting a failed task gave %v, %v; want its *PanicError as the value", v, err)
		}
		ex.Close()
	})
}

func TestRetry(t *testing.T) {
	ex := NewRetry(RetryConfig{Retries: 3})
	rec := &traces.Log{}
	ex.SetRecorder(rec)
	var made, polls atomic.Int64
	factory := func() Future {
		n := made.Add(1)
		done := false
		return FutureFunc(func(*Context) (any, bool) {
			polls.Add(1)
			if done {
				panic("a finished future was polled again")
			}
			if n < 3 {
				panic("flaky")
			}
			done = true
			return n, true
		})
	}
	h, err := ex.SpawnRetry(factory, 5)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := h.Join(); v != int64(3) || err != nil {
		t.Fatalf("Join = %v, %v; want 3 (third attempt)", v, err)
	}
	always := func() Future {
		return FutureFunc(func(*Context) (any, bool) { return Failed{errors.New("never")}, true })
	}
	h2, _ := ex.SpawnRetry(always, 1)
	if _, err := h2.Join(); err == nil {
		t.Fatal("a task that always fails succeeded")
	}
	if _, err := ex.SpawnRetry(nil, 1); !errors.Is(err, ErrNilFuture) {
		t.Fatalf("SpawnRetry(nil) = %v", err)
	}
	ex.Close()
	var requeues int
	for _, e := range rec.Events() {
		if e.Kind == traces.KindRequeue {
			requeues++
		}
	}
	if requeues != 2+1 {
		t.Fatalf("%d re-queues, want 3 (two for the first task, one for the second)", requeues)
	}
	if err := checkEvents(ex.Describe(), rec.Events(), 2, true); err != nil {
		t.Fatal(err)
	}
}

func TestMonitoredStats(t *testing.T) {
	m := NewMonitored(NewWorkSteal(WorkStealConfig{}))
	var w Waker
	for i := range 100 {
		m.Spawn(FutureFunc(func(cx *Context) (any, bool) {
			if i == 0 {
				w = cx.Waker()
			}
			if i%10 == 9 {
				panic(i)
			}
			return i, true
		}))
	}
	m.Wait()
	w.Wake()
	m.Close()
	s := m.Stats()
	if s.Spawned != 100 || s.Completed != 90 || s.Failed != 10 || s.Polls != 100 || s.Wakes != 1 || s.LateWakes != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestRegistry(t *testing.T) {
	names := BuiltinNames()
	if len(names) != 7 {
		t.Fatalf("BuiltinNames = %v", names)
	}
	for _, n := range names {
		f, ok := Builtin(n)
		if !ok {
			t.Fatal(n)
		}
		ex := f()
		for _, ability := range []bool{isReporter(ex), isControllable(ex), isDescriber(ex)} {
			if !ability {
				t.Errorf("%s lacks an ability", n)
			}
		}
		h := describe(ex)
		if h.Policy == "" || h.Workers < 1 || h.Format != traces.Format {
			t.Errorf("%s: header %+v", n, h)
		}
		ex.Close()
	}
	if _, ok := Builtin("nope"); ok {
		t.Fatal("unknown name accepted")
	}
}

func isReporter(ex Executor) bool     { _, ok := ex.(Reporter); return ok }
func isControllable(ex Executor) bool { _, ok := ex.(Controllable); return ok }
func isDescriber(ex Executor) bool    { _, ok := ex.(Describer); return ok }

// TestGoexitInPoll: a future that calls runtime.Goexit fails its task with
// ErrGoexit, and the executor keeps all its workers.
func TestGoexitInPoll(t *testing.T) {
	forEachBuiltin(t, func(t *testing.T, newEx func() Executor) {
		ex := newEx()
		for range 3 {
			h, _ := ex.Spawn(FutureFunc(func(*Context) (any, bool) { runtime.Goexit(); return nil, true }))
			_, err := h.Join()
			var pe *PanicError
			if !errors.As(err, &pe) || pe.Value != ErrGoexit {
				t.Fatalf("Join = %v, want a *PanicError with ErrGoexit", err)
			}
		}
		h, _ := ex.Spawn(ready(5))
		if v, err := h.Join(); v != 5 || err != nil {
			t.Fatalf("after Goexit: %v, %v", v, err)
		}
		if err := ex.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// funcWaker is a RawWaker that is not comparable (it holds a func).
type funcWaker struct{ f func() }

func (w funcWaker) Wake()           { w.f() }
func (w funcWaker) Clone() RawWaker { return w }

// TestHandlePollForeignWaker: a handle awaited from outside the executor,
// with a foreign, non-comparable waker, polled repeatedly, wakes it once
// the task is DONE.
func TestHandlePollForeignWaker(t *testing.T) {
	ex := NewWorkSteal(WorkStealConfig{})
	var rel atomic.Bool
	var tw atomic.Value
	h, _ := ex.Spawn(FutureFunc(func(cx *Context) (any, bool) {
		if rel.Load() {
			return 9, true
		}
		tw.Store(cx.Waker())
		return nil, false
	}))
	woken := make(chan struct{}, 4)
	cx := NewContext(NewWaker(funcWaker{func() { woken <- struct{}{} }}), -1)
	for range 3 {
		if _, ok := h.Poll(cx); ok {
			t.Fatal("ready too early")
		}
	}
	for tw.Load() == nil {
		time.Sleep(time.Millisecond)
	}
	rel.Store(true)
	tw.Load().(Waker).Wake()
	select {
	case <-woken:
	case <-time.After(10 * time.Second):
		t.Fatal("the foreign waker was never woken")
	}
	if v, ok := h.Poll(cx); !ok || v != 9 {
		t.Fatalf("Poll after completion = %v, %v", v, ok)
	}
	ex.Close()
}

// TestSpawnRacingClose: spawns from several goroutines race with Close;
// each is either refused with ErrClosed or runs to completion before Close
// returns.
func TestSpawnRacingClose(t *testing.T) {
	forEachBuiltin(t, func(t *testing.T, newEx func() Executor) {
		for range 20 {
			ex := newEx()
			var wg sync.WaitGroup
			var mu sync.Mutex
			var hs []Handle
			var ran atomic.Int64
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 50 {
						h, err := ex.Spawn(FutureFunc(func(*Context) (any, bool) { ran.Add(1); return 1, true }))
						if errors.Is(err, ErrClosed) {
							return
						}
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						hs = append(hs, h)
						mu.Unlock()
					}
				}()
			}
			if err := ex.Close(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			n, r := len(hs), ran.Load()
			mu.Unlock()
			if int64(n) > r {
				t.Fatalf("Close returned with %d tasks admitted but only %d run", n, r)
			}
			wg.Wait()
			for _, h := range hs {
				if v, err := h.Join(); v != 1 || err != nil {
					t.Fatalf("Join = %v, %v", v, err)
				}
			}
		}
	})
}

// TestSetAfterStart: SetRecorder and SetScheduler after the first Spawn do
// nothing (no race with the running workers, no half-recorded trace).
func TestSetAfterStart(t *testing.T) {
	ex := NewWorkSteal(WorkStealConfig{})
	h, _ := ex.Spawn(ready(1))
	h.Join()
	rec := &traces.Log{}
	ex.SetRecorder(rec)
	ex.SetScheduler(newTestSched(1))
	h, _ = ex.Spawn(ready(2))
	if v, err := h.Join(); v != 2 || err != nil {
		t.Fatal(v, err)
	}
	ex.Close()
	if n := len(rec.Events()); n != 0 {
		t.Fatalf("%d events recorded by a recorder set after the start", n)
	}
}

// TestNoWorkerAfterClose: once Close has stopped the workers, goroutines
// started afterwards (which the runtime may give a stopped worker's
// goroutine descriptor) are not taken for workers: Join returns the result,
// not ErrWaitInTask, and a late wake is recorded as one from outside.
func TestNoWorkerAfterClose(t *testing.T) {
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			newEx, _ := Builtin(name)
			ex := newEx()
			rec := &traces.Log{}
			ex.(Reporter).SetRecorder(rec)
			var wk Waker
			h, err := ex.Spawn(FutureFunc(func(cx *Context) (any, bool) {
				wk = cx.Waker()
				return 7, true
			}))
			if err != nil {
				t.Fatal(err)
			}
			if err := ex.Close(); err != nil {
				t.Fatal(err)
			}
			for i := range 200 {
				errc := make(chan error, 1)
				go func() {
					wk.Wake()
					v, err := h.Join()
					if err == nil && v != 7 {
						err = fmt.Errorf("Join returned %v", v)
					}
					errc <- err
				}()
				if err := <-errc; err != nil {
					t.Fatalf("goroutine %d after Close: %v", i, err)
				}
			}
			for _, e := range rec.Events() {
				if e.Kind == traces.KindWake && e.Worker != -1 {
					t.Fatalf("a wake after Close recorded as worker %d's", e.Worker)
				}
			}
		})
	}
}
