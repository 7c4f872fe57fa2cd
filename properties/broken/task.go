package broken

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/traces"
)

// Task states, as in the model.
const (
	queued uint32 = iota + 1
	running
	waiting
	notified
	done
)

// sched is what a task needs of its executor: where a wake puts it.
type sched interface {
	// place pushes a woken (or, requeue, NOTIFIED) task and returns where;
	// the caller holds the record lock and emits the event.
	place(t *task, requeue bool) traces.Queue
	// notify tells a parked worker of a push; without the record lock.
	notify()
	finished(t *task)
	bugs() bug
	scheduler() executor.Scheduler
	lockRec()
	unlockRec()
	emit(e traces.Event)
	self() int32
}

// task is one spawned future. Its state word is the only synchronization
// between wakers and the worker polling it: Wake moves WAITING → QUEUED
// (and pushes) or RUNNING → NOTIFIED with one CAS, so exactly one party
// enqueues the task after each poll.
type task struct {
	id       int64
	f        executor.Future
	ex       sched
	state    atomic.Uint32
	prio     int
	enqueued int64 // pop count when it was last queued, for aging

	mu      sync.Mutex // guards the fields below
	isDone  bool
	value   any
	err     error
	waiters []executor.Waker
	doneC   chan struct{}
}

func newTask(id int64, f executor.Future, ex sched) *task {
	t := &task{id: id, f: f, ex: ex, doneC: make(chan struct{})}
	t.state.Store(queued)
	return t
}

// Wake implements executor.RawWaker: the WAKE rule. Safe from any
// goroutine. The state word changes, and the task is pushed, under the
// record lock, with the wake's event.
func (t *task) Wake() {
	if s := t.ex.scheduler(); s != nil {
		s.Yield(executor.PointWake)
	}
	t.ex.lockRec()
	e := traces.Event{Kind: traces.KindWake, Task: t.id, Worker: t.ex.self()}
	push := false
	switch t.state.Load() {
	case waiting:
		t.state.Store(queued)
		e.Outcome, push = traces.OutcomeScheduled, true
	case running:
		t.state.Store(notified)
		e.Outcome = traces.OutcomeNotified
	case queued:
		e.Outcome = traces.OutcomeCoalesced
		if t.ex.bugs()&bugDoubleEnqueue != 0 {
			// The bug: a wake of a queued task pushes it again (and is
			// recorded so: a wake that schedules it a second time).
			e.Outcome, push = traces.OutcomeScheduled, true
		}
	case notified:
		e.Outcome = traces.OutcomeCoalesced
	default: // done
		e.Outcome = traces.OutcomeLate
	}
	if push {
		e.Queue = t.ex.place(t, false)
	}
	t.ex.emit(e)
	t.ex.unlockRec()
	if push {
		t.ex.notify()
	}
}

// Clone implements executor.RawWaker.
func (t *task) Clone() executor.RawWaker {
	if t.ex.bugs()&bugCloneNoop != 0 {
		return noopWaker{t}
	}
	return t
}

// noopWaker is the clone bug's waker: it wakes nothing, and is recorded so
// (a wake of its task, dropped).
type noopWaker struct{ t *task }

func (n noopWaker) Wake() {
	t := n.t
	t.ex.lockRec()
	t.ex.emit(traces.Event{Kind: traces.KindWake, Task: t.id, Worker: t.ex.self(), Outcome: traces.OutcomeDropped})
	t.ex.unlockRec()
}

func (n noopWaker) Clone() executor.RawWaker { return n }

// poll polls the task's future once, on worker w, which took it (ctl.took)
// and so made it RUNNING, and returns whether a parked worker must be told
// of a push: it was NOTIFIED during the poll and is queued again
// (TASK-SUSPEND, through place). A panic fails the task, or, with the
// re-poll bug, is retried by polling the same (finished) future again.
func (t *task) poll(cx *executor.Context, w int) (pushed bool) {
	v, ready, perr := t.pollOnce(cx)
	if s := t.ex.scheduler(); s != nil {
		// Between the poll's return and the state change: where a wake
		// from another goroutine meets RUNNING or WAITING.
		s.Yield(executor.PointPoll)
	}
	wk := int32(w)
	if perr != nil && t.ex.bugs()&bugRepollAfterReady != 0 {
		// The bug: a retry that re-polls the failed future instead of
		// starting a fresh one. Recorded as it happens: the poll fails,
		// and the failed task is polled again.
		t.ex.lockRec()
		t.ex.emit(traces.Event{Kind: traces.KindPanic, Task: t.id, Worker: wk, Detail: perr.Error()})
		t.ex.emit(traces.Event{Kind: traces.KindPollEnd, Task: t.id, Worker: wk, Result: traces.ResultPanic})
		t.ex.emit(traces.Event{Kind: traces.KindPollBegin, Task: t.id, Worker: wk})
		t.ex.unlockRec()
		v, ready, perr = t.pollOnce(cx)
	}
	t.ex.lockRec()
	if perr != nil {
		t.state.Store(done)
		t.ex.emit(traces.Event{Kind: traces.KindPanic, Task: t.id, Worker: wk, Detail: perr.Error()})
		t.ex.emit(traces.Event{Kind: traces.KindPollEnd, Task: t.id, Worker: wk, Result: traces.ResultPanic})
		t.ex.unlockRec()
		t.complete(nil, perr)
		return false
	}
	if ready {
		t.state.Store(done)
		t.ex.emit(traces.Event{Kind: traces.KindPollEnd, Task: t.id, Worker: wk, Result: traces.ResultReady})
		t.ex.unlockRec()
		t.complete(v, nil)
		return false
	}
	t.ex.emit(traces.Event{Kind: traces.KindPollEnd, Task: t.id, Worker: wk, Result: traces.ResultPending})
	if t.ex.bugs()&bugLostWakeup != 0 {
		// The bug: the NOTIFIED flag is cleared before it is checked, so a
		// wake during the poll is lost (no re-queue follows).
		t.state.Store(waiting)
		t.ex.unlockRec()
		return false
	}
	if t.state.Load() == running {
		t.state.Store(waiting)
		t.ex.unlockRec()
		return false
	}
	// NOTIFIED during the poll: queue it again (TASK-SUSPEND).
	t.state.Store(queued)
	q := t.ex.place(t, true)
	t.ex.emit(traces.Event{Kind: traces.KindRequeue, Task: t.id, Worker: wk, Queue: q})
	t.ex.unlockRec()
	return true
}

func (t *task) pollOnce(cx *executor.Context) (v any, ready bool, perr error) {
	defer func() {
		if x := recover(); x != nil {
			if control.IsAbort(x) {
				panic(x) // a controlled run being stopped: unwind
			}
			perr = &executor.PanicError{Task: t.id, Value: x, Stack: debug.Stack()}
		}
	}()
	v, ready = t.f.Poll(cx)
	return v, ready, nil
}

func (t *task) complete(v any, err error) {
	t.mu.Lock()
	if t.isDone {
		// A defect that polls a finished task again (a double enqueue
		// re-polls a future that returns Ready again) completes it twice:
		// the poll is in the trace for the checks to find; the process
		// must not die of closing doneC twice.
		t.mu.Unlock()
		return
	}
	t.state.Store(done)
	t.isDone, t.value, t.err = true, v, err
	ws := t.waiters
	t.waiters = nil
	close(t.doneC)
	t.mu.Unlock()
	for _, w := range ws {
		w.Wake()
	}
	t.ex.finished(t)
}

// Poll makes a task's handle a Future: Ready with the task's value once it
// is done.
func (t *task) Poll(cx *executor.Context) (any, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.isDone {
		return t.value, true
	}
	t.waiters = append(t.waiters, cx.Waker())
	return nil, false
}

// Join blocks until the task is done: a Block under a Scheduler.
func (t *task) Join() (any, error) {
	if s := t.ex.scheduler(); s != nil {
		s.Block(executor.PointNone, func() bool { return t.isDone })
	}
	<-t.doneC
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.value, t.err
}

// live counts unfinished tasks, for Wait and Close.
type live struct {
	c    *ctl
	mu   sync.Mutex
	cond sync.Cond
	n    int
}

func (l *live) add() {
	l.mu.Lock()
	l.n++
	l.mu.Unlock()
}

func (l *live) done() {
	l.mu.Lock()
	l.n--
	if l.n == 0 {
		l.cond.Broadcast()
	}
	l.mu.Unlock()
}

// wait blocks until no task is unfinished: a Block under a Scheduler (whose
// ready runs while no controlled goroutine does, so it may read n).
func (l *live) wait() {
	if s := l.c.sched; s != nil {
		s.Block(executor.PointNone, func() bool { return l.n == 0 })
		return
	}
	l.mu.Lock()
	for l.n > 0 {
		l.cond.Wait()
	}
	l.mu.Unlock()
}

func (l *live) init(c *ctl) { l.c, l.cond.L = c, &l.mu }

func errf(format string, args ...any) error { return fmt.Errorf("broken: "+format, args...) }
