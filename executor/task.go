package executor

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Task states, held in the low bits of a task's state word. The values are
// those of model.TaskState, so that a state word reads the same in code,
// traces and the model.
const (
	stQueued   uint64 = 1 // in exactly one queue
	stRunning  uint64 = 2 // being polled by one worker
	stWaiting  uint64 = 3 // Pending returned, waker registered
	stNotified uint64 = 4 // woken while running
	stDone     uint64 = 5 // finished; never polled again

	stMask  uint64 = 7
	verStep uint64 = 8 // the rest of the word counts transitions
)

// to returns the state word after a transition from old to state s: the
// version above the state bits grows with every transition, so a
// compare-and-swap never succeeds on a stale word (no ABA), and a wake that
// coalesces is a transition too (old state, new version).
func to(old, s uint64) uint64 { return (old&^stMask + verStep) | s }

// task is one spawned future and its state machine. Every transition of the
// state word is a compare-and-swap preceded by a fresh load; when recording,
// the event's sequence number is drawn between that load and the CAS. So the
// order of the sequence numbers of one task's transitions is the order of
// its CASes: a transition that succeeds after another loaded that other's
// result, and drew its number after it.
type task struct {
	state atomic.Uint64
	id    int64
	fut   Future // read and replaced only by the worker running the task
	owner owner
	next  *task // link in an intrusive FIFO queue; a task is in one queue at most

	// priority executors: the heap key and position; prioRec: the key is
	// recorded on the task's pushes (format v1.1 priority)
	key     int64
	stamp   int64
	index   int
	prioRec bool

	// retry executors; future is the id of the future being polled, made
	// is the id of the last future made (from 1, one more per fresh
	// future); future is recorded on polls when not 0 (format v1.1)
	factory      func() Future
	retries      int
	future, made int64

	// result; written once before done is closed
	value any
	err   error
	done  atomic.Pointer[chan struct{}]

	amu      sync.Mutex
	finished bool    // guarded by amu
	awaiters []Waker // guarded by amu: tasks awaiting this one's result
}

// owner is the executor side of a task: what its waker calls.
type owner interface {
	wake(t *task)
	joinCtl() *base
}

// Wake implements RawWaker: the WAKE rule, through the task's executor.
func (t *task) Wake() { t.owner.wake(t) }

// Clone implements RawWaker: a copy wakes the same task.
func (t *task) Clone() RawWaker { return t }

func (t *task) waker() Waker { return Waker{raw: t} }

// closedCh marks a finished task's done slot, so that a Join that comes
// after completion never allocates a channel.
var closedCh = func() *chan struct{} { c := make(chan struct{}); close(c); return &c }()

// finish publishes the task's result, wakes the tasks awaiting it and
// releases Join callers. Called once, by the worker that moved the task to
// DONE.
func (t *task) finish(value any, err error) {
	t.value, t.err = value, err
	t.fut = nil
	t.factory = nil
	t.amu.Lock()
	t.finished = true
	ws := t.awaiters
	t.awaiters = nil
	t.amu.Unlock()
	if old := t.done.Swap(closedCh); old != nil && old != closedCh {
		close(*old)
	}
	for _, w := range ws {
		w.Wake()
	}
}

// JoinHandle is the Handle of a task spawned on a built-in executor. It
// costs nothing beyond the task itself (it is the task, seen from outside).
// Safe for concurrent use.
type JoinHandle task

// ID returns the task's id: from 1, in spawn order, per executor.
func (h *JoinHandle) ID() int64 { return h.id }

// Poll lets a task await this one: Ready with this task's value (or its
// error, as the value, if it failed), else Pending after registering cx's
// waker, which is woken when this task is DONE.
func (h *JoinHandle) Poll(cx *Context) (any, bool) {
	t := (*task)(h)
	t.amu.Lock()
	if t.finished {
		t.amu.Unlock()
		if t.err != nil {
			return t.err, true
		}
		return t.value, true
	}
	w := cx.Waker()
	// A task that polls this handle again while waiting is registered
	// once. Only our own wakers are compared: another executor's RawWaker
	// may not be comparable.
	if wt, ok := w.raw.(*task); ok {
		for _, a := range t.awaiters {
			if at, ok := a.raw.(*task); ok && at == wt {
				t.amu.Unlock()
				return nil, false
			}
		}
	}
	t.awaiters = append(t.awaiters, w.Clone())
	t.amu.Unlock()
	return nil, false
}

// Join blocks until the task is DONE and returns its value, or the error it
// failed with: a *PanicError, or an error wrapping a Failed's Err. Called
// from inside one of the executor's own tasks it returns ErrWaitInTask
// instead of blocking a worker.
func (h *JoinHandle) Join() (any, error) {
	t := (*task)(h)
	b := t.owner.joinCtl()
	if b.inWorker() >= 0 {
		return nil, ErrWaitInTask
	}
	if b.sched != nil {
		b.sched.Block(PointNone, func() bool { return t.done.Load() == closedCh })
	} else {
		p := t.done.Load()
		if p == nil {
			c := make(chan struct{})
			if !t.done.CompareAndSwap(nil, &c) {
				p = t.done.Load()
			} else {
				p = &c
			}
		}
		<-*p
	}
	return t.value, t.err
}

// Failed is a value a future may return as Ready to say that it failed
// without panicking. Built-in executors treat it like a panic without a
// stack: the task fails (Join returns an error wrapping Err), and a retry
// executor runs it again from a fresh future.
type Failed struct {
	Err error
}

// FailedError is the error Join returns for a task that ended with Failed.
type FailedError struct {
	Task int64
	Err  error
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("executor: task %d failed: %v", e.Task, e.Err)
}

func (e *FailedError) Unwrap() error { return e.Err }
