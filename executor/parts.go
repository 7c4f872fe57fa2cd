package executor

import (
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/internal/goid"
)

// The Kit's pieces, one by one, for an executor that keeps its own task
// type (a future in a mutex, a state machine of its own) and so cannot use
// Kit.Run: the identity of its worker goroutines (WorkerIDs), the
// accounting of Wait and Close (Tally), the Handle of a task (Promise), and
// the conversion of a poll's outcome (PollTask). Each works alone; together
// they are what Spawn, Wait, Close and Join owe (examples/ownexec uses all
// four). They block on real locks: an executor built on them runs as a
// black box (Kit.SetScheduler is what makes one controllable).

// WorkerIDs knows which goroutines are an executor's workers, so that
// Wait, Close and Join called from inside a task return ErrWaitInTask
// instead of deadlocking. It reads the goroutine's identity directly (no
// parsing of runtime.Stack): a few nanoseconds per worker. Create it with
// NewWorkerIDs; safe for concurrent use.
type WorkerIDs struct{ gs []atomic.Uintptr }

// NewWorkerIDs returns the identities of n workers (at least 1, at most
// MaxWorkers), none running yet.
func NewWorkerIDs(n int) *WorkerIDs {
	return &WorkerIDs{gs: make([]atomic.Uintptr, min(max(n, 1), MaxWorkers))}
}

// Run runs fn on the calling goroutine as worker w: from its start to its
// return (or panic), Current on this goroutine returns w.
func (ids *WorkerIDs) Run(w int, fn func()) {
	ids.gs[w].Store(goid.Curg())
	defer ids.gs[w].Store(0) // the runtime reuses a finished goroutine's identity
	fn()
}

// Current returns the index of the worker the caller runs on, or -1.
func (ids *WorkerIDs) Current() int {
	if ids == nil {
		return -1
	}
	return workerOf(ids.gs)
}

// workerOf returns the index of the calling goroutine among the workers'
// goroutines gs (goid.Curg values, 0 for none), or -1. It costs a few
// nanoseconds per worker.
func workerOf(gs []atomic.Uintptr) int {
	g := goid.Curg()
	for i := range gs {
		if gs[i].Load() == g {
			return i
		}
	}
	return -1
}

// Tally is the accounting of Wait and Close: it counts the tasks spawned
// and not finished, refuses new ones after Close, and wakes Wait when none
// is left. The zero Tally works (without worker identities, Wait and Close
// from inside a task deadlock; set IDs). Safe for concurrent use.
type Tally struct {
	IDs *WorkerIDs // the executor's workers: Wait and Close from one of them return ErrWaitInTask

	mu     sync.Mutex
	cond   sync.Cond
	n      int
	closed bool
}

// Add counts a task about to be spawned with future f: ErrNilFuture for a
// nil f, ErrClosed after Close (then nothing is counted).
func (t *Tally) Add(f Future) error {
	if f == nil {
		return ErrNilFuture
	}
	if ff, ok := f.(FutureFunc); ok && ff == nil {
		return ErrNilFuture
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	t.n++
	return nil
}

// Done uncounts a finished task.
func (t *Tally) Done() {
	t.mu.Lock()
	if t.n--; t.n == 0 && t.cond.L != nil {
		t.cond.Broadcast()
	}
	t.mu.Unlock()
}

// Wait implements Executor.Wait: it returns once every task counted so far
// is done.
func (t *Tally) Wait() error {
	if t.IDs.Current() >= 0 {
		return ErrWaitInTask
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cond.L == nil {
		t.cond.L = &t.mu
	}
	for t.n > 0 {
		t.cond.Wait()
	}
	return nil
}

// Close implements the first part of Executor.Close: no new tasks, then
// Wait. The executor then stops its workers. A second Close returns
// ErrClosed.
func (t *Tally) Close() error {
	if t.IDs.Current() >= 0 {
		return ErrWaitInTask
	}
	t.mu.Lock()
	closed := t.closed
	t.closed = true
	t.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return t.Wait()
}

// Promise is the Handle of one task of an executor with its own task
// type: Complete it once when the task finishes; Join blocks for it, Poll
// awaits it from another task. Create it with NewPromise; safe for
// concurrent use.
type Promise struct {
	ids      *WorkerIDs
	mu       sync.Mutex
	done     chan struct{}
	finished bool
	v        any
	err      error
	awaiters []Waker
}

// NewPromise returns the Handle of a task of the executor whose workers
// ids knows (nil: Join from inside a task is not detected).
func NewPromise(ids *WorkerIDs) *Promise {
	return &Promise{ids: ids, done: make(chan struct{})}
}

// Complete records the task's result, v or err (PollTask's), wakes the
// tasks awaiting it and releases Join. Only the first call counts; it
// reports whether it was the first.
func (p *Promise) Complete(v any, err error) bool {
	p.mu.Lock()
	if p.finished {
		p.mu.Unlock()
		return false
	}
	p.finished, p.v, p.err = true, v, err
	ws := p.awaiters
	p.awaiters = nil
	close(p.done)
	p.mu.Unlock()
	for _, w := range ws {
		w.Wake()
	}
	return true
}

// Join implements Handle: it blocks until the task is done and returns its
// value, or its error: a *PanicError if its future panicked, a
// *FailedError if it returned a Failed value. From inside one of the
// executor's tasks it returns ErrWaitInTask.
func (p *Promise) Join() (any, error) {
	if p.ids.Current() >= 0 {
		return nil, ErrWaitInTask
	}
	<-p.done
	return p.v, p.err
}

// Poll implements Future: Ready with the task's value (or its error, as
// the value), else Pending, after registering cx's waker.
func (p *Promise) Poll(cx *Context) (any, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		if p.err != nil {
			return p.err, true
		}
		return p.v, true
	}
	p.awaiters = append(p.awaiters, cx.Waker())
	return nil, false
}

// PollTask polls f once for task id and converts the outcome as the
// built-in executors do: done reports whether the future finished; then
// err is a *PanicError (with the stack) if it panicked, a *FailedError if
// it returned a Failed value as Ready, and nil with its value v otherwise.
// A panic never escapes: the task fails, the worker goes on.
func PollTask(f Future, cx *Context, id int64) (v any, done bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, done, err = nil, true, &PanicError{Task: id, Value: r, Stack: debug.Stack()}
		}
	}()
	v, done = f.Poll(cx)
	if fl, ok := v.(Failed); ok && done {
		return nil, true, &FailedError{Task: id, Err: fl.Err}
	}
	return v, done, nil
}
