package executor

import (
	"sync/atomic"

	"github.com/execspec/execspec/executor/internal/eventbuf"
	"github.com/execspec/execspec/traces"
)

// runq is the discipline of a single shared queue: FIFO or priority. Its
// methods are called with the queue's lock held.
type runq interface {
	push(t *task)
	pop() *task
}

// fifoq is an intrusive FIFO list: pushing a task allocates nothing, since a
// task is in at most one queue and carries its own link.
type fifoq struct {
	head, tail *task
}

func (q *fifoq) push(t *task) {
	t.next = nil
	if q.tail == nil {
		q.head = t
	} else {
		q.tail.next = t
	}
	q.tail = t
}

func (q *fifoq) pop() *task {
	t := q.head
	if t == nil {
		return nil
	}
	q.head = t.next
	if q.head == nil {
		q.tail = nil
	}
	t.next = nil
	return t
}

// shared is the engine of the executors with one shared queue (fifo,
// wakeable, priority, timeslice, retry): W workers take from the queue, in
// the model's terms the global queue, so every take is a GLOBAL-STEAL and
// every push goes to QueueGlobal.
//
// The queue lock orders everything that touches the queue: pushes and pops,
// and the state transitions that go with them (SPAWN, WAKE of a WAITING
// task, the re-queue of a NOTIFIED one, the take), whose sequence numbers
// are drawn inside it.
type shared struct {
	base
	mu    mutex // guards q and qb
	q     runq
	qb    eventbuf.Shared // events of pushes from outside the workers
	size  atomic.Int64    // len(q), readable without the lock (park checks)
	slice int             // re-polls allowed to a task NOTIFIED during its poll

	// Format v1.1 facts recorded: each task's priority on its pushes
	// (priority), the future id on polls (retry).
	prio, futures bool

	// refresh makes a failed task's fresh future; nil means refreshFuture
	// (tests set a broken one)
	refresh func(t *task) bool

	hasWork func() bool
}

func (e *shared) initShared(workers int, q runq) {
	e.init(workers, e.work)
	e.stops = true
	e.addQueueBuf(&e.qb, &e.mu)
	e.q = q
	e.hasWork = func() bool { return e.size.Load() > 0 }
}

// spawn is SPAWN onto the shared queue. Any goroutine may call it. The
// push happens under the queue lock, which orders it with every other push
// and pop; then an idle worker, if any, is unparked (after the push, so
// that the worker's re-check finds the task: see lot). prio and factory are
// for the priority and retry executors.
func (e *shared) spawn(f Future, prio int, factory func() Future, retries int) (Handle, error) {
	t, err := e.spawnTask(f, e)
	if err != nil {
		return nil, err
	}
	t.key = int64(prio)
	t.factory, t.retries = factory, retries
	t.prioRec = e.prio
	if e.futures {
		t.future, t.made = 1, 1
	}
	w := -1
	if e.rec != nil {
		w = e.inWorker()
	}
	e.yield(PointPush)
	e.mu.lock(&e.ctl)
	t.state.Store(stQueued)
	e.q.push(t)
	e.size.Add(1)
	if e.rec != nil {
		seq := e.tick()
		e.emitPush(&e.qb, w, evPush(traces.KindSpawn, seq, t, w).WithQueueOp(traces.QueueGlobal, seq-1))
	}
	e.mu.unlock()
	if e.rec != nil {
		e.syncPush(&e.qb, w)
	}
	e.lot.notify()
	return (*JoinHandle)(t), nil
}

// wake is the WAKE rule. Any goroutine may call it, any number of times.
// A wake that finds the task RUNNING, QUEUED, NOTIFIED or DONE is one CAS
// on the task's state word and touches no queue; only WAITING → QUEUED
// takes the queue lock, and does its CAS inside it. The CAS synchronizes
// with the worker's CAS at the end of the poll: exactly one of them sees
// the other, so the wake is either NOTIFIED (and the worker re-queues) or
// schedules the task itself; it is never lost.
func (e *shared) wake(t *task) {
	e.yield(PointWake)
	w := -1
	if e.rec != nil {
		w = e.inWorker()
	}
	for {
		if e.wakeNoPush(t, w) {
			return
		}
		// WAITING → QUEUED: the transition and the push happen under the
		// queue lock, so the wake's sequence number orders it both among
		// the task's transitions and among the queue's operations.
		e.yield(PointPush)
		var seq uint64
		e.mu.lock(&e.ctl)
		old := t.state.Load()
		if old&stMask != stWaiting {
			e.mu.unlock()
			continue
		}
		if e.rec != nil {
			seq = e.tick()
		}
		if !t.state.CompareAndSwap(old, to(old, stQueued)) {
			e.mu.unlock()
			continue
		}
		e.q.push(t)
		e.size.Add(1)
		if e.rec != nil {
			e.emitPush(&e.qb, w, evPush(traces.KindWake, seq, t, w).WithOutcome(traces.OutcomeScheduled).WithQueueOp(traces.QueueGlobal, seq-1))
		}
		e.mu.unlock()
		if e.rec != nil {
			e.syncPush(&e.qb, w)
		}
		e.lot.notify()
		return
	}
}

// take pops the next task (GLOBAL-STEAL) and makes it RUNNING on worker w.
// Only worker w calls it. The pop and the QUEUED → RUNNING CAS happen under
// the queue lock, which orders the take after the push that queued the
// task (so the poll sees everything done before the spawn or wake).
func (e *shared) take(w int) *task {
	if e.size.Load() == 0 {
		return nil
	}
	e.yield(PointPop)
	e.mu.lock(&e.ctl)
	t := e.q.pop()
	if t == nil {
		e.mu.unlock()
		return nil
	}
	e.size.Add(-1)
	seq := e.running(t)
	e.mu.unlock()
	if e.rec != nil {
		e.stashTake(w, traces.SourceGlobal, -1, seq)
	}
	return t
}

// requeue puts t, which worker w was running, back on the queue at the end
// of its poll: TASK-SUSPEND of a NOTIFIED task (res Pending), or a retry
// with a fresh future (res Panic). Only the worker running t calls it; the
// CAS to QUEUED and the push happen under the queue lock, like a spawn's.
// Wakes meanwhile only bump the version (NOTIFIED and QUEUED coalesce),
// which the CAS loop absorbs. It records the poll's end and the
// re-queue.
func (e *shared) requeue(t *task, w int, res traces.Result) {
	e.yield(PointPush)
	e.mu.lock(&e.ctl)
	s2 := e.move2(t, stQueued)
	s1 := s2 - 1
	e.q.push(t)
	e.size.Add(1)
	if e.rec != nil {
		e.emit(w, evPoll(traces.KindPollEnd, s1, t, w).WithResult(res))
		e.emitPush(&e.qb, w, evPush(traces.KindRequeue, s2, t, w).WithQueueOp(traces.QueueGlobal, s1-1))
	}
	t.future = t.made // after a retry, the next poll drives the fresh future
	e.mu.unlock()
	if e.rec != nil {
		e.sync(w)
	}
	e.lot.notify()
}

// repoll moves a task NOTIFIED during its poll straight back to RUNNING on
// the same worker (the time-slice policy), recording the poll's end and the
// next poll's beginning. Only the worker running t calls it; no queue is
// touched.
func (e *shared) repoll(t *task, w int) {
	s2 := e.move2(t, stRunning)
	s1 := s2 - 1
	if e.rec != nil {
		e.emit(w, evPoll(traces.KindPollEnd, s1, t, w).WithResult(traces.ResultPending))
		e.emit(w, evPoll(traces.KindPollBegin, s2, t, w))
		e.sync(w)
	}
}

// work is the loop of worker w (base.loop).
func (e *shared) work(w int) { e.loop(w, e.take, e.hasWork, e.run) }

// run polls t until its poll ends in WAITING, a re-queue or DONE.
func (e *shared) run(t *task, w int, cx *Context) {
	repolls := 0
	for {
		v, ready, err := e.pollStep(t, w, cx)
		if err != nil {
			if t.retries > 0 && t.factory != nil {
				t.retries--
				refresh := e.refresh
				if refresh == nil {
					refresh = refreshFuture
				}
				if refresh(t) {
					e.requeue(t, w, e.failResult(err))
					return
				}
			}
			e.complete(t, w, nil, err)
			return
		}
		if ready {
			e.complete(t, w, v, nil)
			return
		}
		if e.suspend(t, w) {
			return
		}
		if repolls < e.slice {
			repolls++
			e.repoll(t, w)
			continue
		}
		e.requeue(t, w, traces.ResultPending)
		return
	}
}
