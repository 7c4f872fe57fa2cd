package executor

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/traces"
)

// base is what every built-in executor shares: the Scheduler hook, the
// recorder and its logical clock, task ids, the count of unfinished tasks,
// the identities of the worker goroutines, the parking lot and shutdown.
type base struct {
	ctl
	rec   Recorder
	clock atomic.Uint64 // the one logical clock of this executor's events

	ids     atomic.Int64 // last task id handed out
	pending atomic.Int64 // spawned and not DONE
	closed  atomic.Bool
	started atomic.Bool
	late    atomic.Int64 // wakes that found their task DONE

	nworkers int
	gs       []atomic.Uintptr // worker goroutine identities (curg), 0 before start
	wk       []workerLocal    // wk[w] is touched only by worker w
	lot      lot
	workers  group

	qmu   sync.Mutex // with qcond, wakes Wait when pending drops to zero
	qcond sync.Cond
	quiet func() bool
}

func (b *base) init(workers int) {
	if workers < 1 {
		workers = 1
	}
	b.nworkers = workers
	b.gs = make([]atomic.Uintptr, workers)
	b.wk = make([]workerLocal, workers)
	b.lot.init()
	b.workers.init()
	b.qcond.L = &b.qmu
	b.quiet = func() bool { return b.pending.Load() == 0 }
	// The clock starts at 1, so that a Call tick read before the first
	// event is 1, never 0 (which a trace reads as "no call tick"); the
	// first Seq is 2.
	b.clock.Store(1)
}

func (b *base) joinCtl() *base { return b }

// SetRecorder implements Reporter. Call it before the first Spawn; once the
// workers run it does nothing (changing the recorder under them would be a
// data race, and a trace that starts midway could not be checked).
func (b *base) SetRecorder(r Recorder) {
	if !b.started.Load() {
		b.rec = r
	}
}

// SetScheduler implements Controllable. Call it before the first Spawn;
// once the workers run it does nothing (they were not started under it).
func (b *base) SetScheduler(s Scheduler) {
	if !b.started.Load() {
		b.sched = s
	}
}

// LateWakes returns how many wakes found their task already DONE (ignored).
func (b *base) LateWakes() int64 { return b.late.Load() }

// tick draws the next number from the executor's logical clock: an event's
// Seq, unique. Only called when recording.
func (b *base) tick() uint64 { return b.clock.Add(1) }

// callTick returns the Call tick of a queue operation: the clock's value
// read just before the operation begins. A read, not a draw: Call < Seq holds since
// the operation's Seq is drawn later, and Return(A) < Call(B) still means
// A took effect before B began, since the clock never goes back. An earlier
// value (say, the last number the worker drew) would be as sound but
// widen the interval, and wide intervals on one queue make a
// linearizability search exponential.
//
// The Return tick of a queue operation is the clock's value where it took
// effect, inside the queue's critical section: its Seq for pushes, and for
// a take the number drawn with it for the poll's beginning. A lock-based
// operation takes effect at that instant, so [Call, Return] contains its
// linearization point, which is all a linearizability check needs.
//
// Why so frugal: every worker and every spawning goroutine writes the
// clock's cache line, and each access costs a transfer between cores.
func (b *base) callTick() uint64 { return b.clock.Load() }

// workerLocal is the state only worker w touches, padded so that workers
// do not share cache lines.
type workerLocal struct {
	cur *task // the task being polled, for a Goexit in its poll

	// The take just made, recorded with the poll's beginning. Scalars
	// only: copying a whole Event (it holds a string) into the heap would
	// cost a write barrier whenever the collector runs.
	tkSeq, tkCall uint64
	tkVictim      int32
	tkSrc         traces.Source

	_ [64]byte
}

// stashTake keeps the take event of worker w until recordTakeAndBegin.
func (b *base) stashTake(w int, src traces.Source, victim int, seq, call uint64) {
	l := &b.wk[w]
	l.tkSeq, l.tkCall, l.tkVictim, l.tkSrc = seq, call, int32(victim), src
}

// recordTakeAndBegin records worker w's stashed take of t and the beginning
// of its poll, whose number r was drawn with the take's (see running): the
// take is r-1, its Return tick r.
func (b *base) recordTakeAndBegin(t *task, w int) {
	l := &b.wk[w]
	r := l.tkSeq
	b.rec.Record(traces.Event{Seq: r - 1, Call: l.tkCall, Return: r, Task: t.id, Worker: int32(w),
		Victim: l.tkVictim, Kind: traces.KindTake, Source: l.tkSrc})
	b.rec.Record(traces.Event{Seq: r, Task: t.id, Worker: int32(w), Victim: -1, Kind: traces.KindPollBegin})
}

// ev returns an event with the fields every event has.
func ev(k traces.Kind, seq uint64, t *task, w int) traces.Event {
	return traces.Event{Seq: seq, Kind: k, Task: t.id, Worker: int32(w), Victim: -1}
}

// inWorker returns the index of the worker the caller runs on, or -1. It
// costs a few nanoseconds per worker.
func (b *base) inWorker() int {
	if !b.started.Load() {
		return -1
	}
	g := curg()
	for i := range b.gs {
		if b.gs[i].Load() == g {
			return i
		}
	}
	return -1
}

// start starts the workers once, at the first Spawn (so that SetScheduler
// and SetRecorder, called before it, apply to them).
func (b *base) start(run func(w int)) {
	if b.started.Load() || !b.started.CompareAndSwap(false, true) {
		return
	}
	for w := 0; w < b.nworkers; w++ {
		b.startWorker(w, run)
	}
}

// ErrGoexit is the Value of the *PanicError of a task whose future called
// runtime.Goexit (as testing's FailNow does) instead of returning.
var ErrGoexit = errors.New("executor: the future called runtime.Goexit")

// startWorker starts worker w. If a future ends the worker's goroutine with
// runtime.Goexit, the task fails with ErrGoexit and a new goroutine takes
// the worker's place, so the executor keeps its workers.
func (b *base) startWorker(w int, run func(w int)) {
	b.workers.add()
	b.goWorker(func() {
		normal := false
		defer func() {
			if !normal {
				b.gs[w].Store(0)
				if t := b.wk[w].cur; t != nil {
					b.wk[w].cur = nil
					err := &PanicError{Task: t.id, Value: ErrGoexit, Stack: debug.Stack()}
					b.recordFailure(t, w, err)
					b.complete(t, w, nil, err)
				}
				b.startWorker(w, run)
			}
			b.workers.done()
		}()
		b.gs[w].Store(curg())
		run(w)
		normal = true
	})
}

// admit counts a new task, or refuses it after Close or for a nil future.
// Counting before looking at closed is what lets Close wait for every task
// that got in: a Spawn that saw closed false had already raised pending.
func (b *base) admit(f Future) error {
	if f == nil {
		return ErrNilFuture
	}
	if ff, ok := f.(FutureFunc); ok && ff == nil {
		return ErrNilFuture
	}
	b.pending.Add(1)
	if b.closed.Load() {
		b.taskDone()
		return ErrClosed
	}
	return nil
}

func (b *base) newTask(f Future, o owner) *task {
	t := &task{fut: f, owner: o, index: -1}
	t.id = b.ids.Add(1)
	return t
}

// taskDone uncounts a task and wakes Wait when none is left.
func (b *base) taskDone() {
	if b.pending.Add(-1) == 0 && b.sched == nil {
		b.qmu.Lock()
		b.qcond.Broadcast()
		b.qmu.Unlock()
	}
}

// Wait implements Executor.Wait: it returns once every task spawned so far
// is DONE. A task that is never woken again keeps it waiting; a caller that
// cannot rule that out should wait with its own timeout. From inside one of
// the executor's tasks it returns ErrWaitInTask at once.
func (b *base) Wait() error {
	if b.inWorker() >= 0 {
		return ErrWaitInTask
	}
	b.block(PointNone, &b.qmu, &b.qcond, b.quiet)
	return nil
}

// Close implements Executor.Close: from now on Spawn returns ErrClosed (also
// from inside tasks), then Close waits for the spawned tasks, as Wait does,
// and stops the workers. A second Close returns ErrClosed at once; Close
// from inside one of the executor's tasks returns ErrWaitInTask and closes
// nothing.
func (b *base) Close() error {
	if b.inWorker() >= 0 {
		return ErrWaitInTask
	}
	if !b.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	b.block(PointNone, &b.qmu, &b.qcond, b.quiet)
	b.lot.shutdown()
	b.workers.wait(&b.ctl)
	return nil
}

// poll calls t's future once, turning a panic into a *PanicError with the
// stack of the polling goroutine. The deferred recover is open-coded by the
// compiler: it allocates nothing when there is no panic.
func (b *base) poll(t *task, cx *Context) (v any, ready bool, perr *PanicError) {
	defer func() {
		if r := recover(); r != nil {
			perr = &PanicError{Task: t.id, Value: r, Stack: debug.Stack()}
		}
	}()
	v, ready = t.fut.Poll(cx)
	return v, ready, nil
}

// failure returns the error of a poll that failed, or nil: a panic, or a
// Ready Failed value.
func failure(t *task, v any, ready bool, perr *PanicError) error {
	if perr != nil {
		return perr
	}
	if ready {
		if f, ok := v.(Failed); ok {
			return &FailedError{Task: t.id, Err: f.Err}
		}
	}
	return nil
}

// recordFailure records the panic event of a failed poll (the PollEnd is
// recorded by the caller with the transition that follows it).
func (b *base) recordFailure(t *task, w int, err error) {
	if b.rec == nil {
		return
	}
	var d string
	switch e := err.(type) {
	case *PanicError:
		d = fmt.Sprintf("panic: %v\n%s", e.Value, e.Stack)
	default:
		d = err.Error()
	}
	e := ev(traces.KindPanic, b.tick(), t, w)
	e.Detail = d
	b.rec.Record(e)
}

// refreshFuture makes a fresh future for a retried task. A factory that
// panics ends the retries.
func refreshFuture(t *task) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f := t.factory()
	if f == nil {
		return false
	}
	t.fut = f
	return true
}

// complete moves a RUNNING or NOTIFIED task to DONE (TASK-COMPLETE, or a
// failed task), records the end of its poll, and publishes the result.
// Called by the worker running t.
func (b *base) complete(t *task, w int, v any, err error) {
	res := traces.ResultReady
	if err != nil {
		res = traces.ResultPanic
		v = nil
	}
	var seq uint64
	for {
		old := t.state.Load()
		if b.rec != nil {
			seq = b.tick()
		}
		if t.state.CompareAndSwap(old, to(old, stDone)) {
			break
		}
	}
	if b.rec != nil {
		e := ev(traces.KindPollEnd, seq, t, w)
		e.Result = res
		b.rec.Record(e)
	}
	t.finish(v, err)
	b.taskDone()
}

// suspend tries the first case of TASK-SUSPEND: RUNNING → WAITING. It
// returns false if the task was NOTIFIED during the poll; then the caller
// re-queues it (the wake is not lost). Only the worker running t calls it.
func (b *base) suspend(t *task, w int) bool {
	for {
		old := t.state.Load()
		if old&stMask != stRunning {
			return false
		}
		var seq uint64
		if b.rec != nil {
			seq = b.tick()
		}
		if t.state.CompareAndSwap(old, to(old, stWaiting)) {
			if b.rec != nil {
				e := ev(traces.KindPollEnd, seq, t, w)
				e.Result = traces.ResultPending
				b.rec.Record(e)
			}
			return true
		}
	}
}

// wakeNoPush handles a wake that finds the task anywhere but WAITING:
// RUNNING → NOTIFIED, QUEUED or NOTIFIED → coalesced (a version bump, so
// that the wake is ordered with the task's other transitions and everything
// before it happens before the next poll), DONE → late. It returns false if
// the task is WAITING: then the caller must schedule it under its queue's
// lock.
func (b *base) wakeNoPush(t *task, w int) bool {
	for {
		old := t.state.Load()
		s := old & stMask
		if s == stWaiting {
			return false
		}
		var seq uint64
		if b.rec != nil {
			seq = b.tick()
		}
		out := traces.OutcomeCoalesced
		switch s {
		case stDone:
			b.late.Add(1)
			if b.rec != nil {
				e := ev(traces.KindWake, seq, t, w)
				e.Outcome = traces.OutcomeLate
				b.rec.Record(e)
			}
			return true
		case stRunning:
			if !t.state.CompareAndSwap(old, to(old, stNotified)) {
				continue
			}
			out = traces.OutcomeNotified
		default: // QUEUED, NOTIFIED
			if !t.state.CompareAndSwap(old, to(old, s)) {
				continue
			}
		}
		if b.rec != nil {
			e := ev(traces.KindWake, seq, t, w)
			e.Outcome = out
			b.rec.Record(e)
		}
		return true
	}
}

// header builds a Describe result.
func header(name string, workers int, policy string, cfg map[string]int) traces.Header {
	return traces.Header{Format: traces.Format, Version: traces.Version, Executor: name, Workers: workers, Policy: policy, Config: cfg}
}

// park blocks worker w until it is notified or the executor shuts down,
// unless hasWork (checked after w announced itself idle) finds work. Under a
// Scheduler it is a Block on ready (hasWork or shutdown), a value made once
// per worker. It records Park and Unpark when w actually slept.
func (b *base) park(w int, hasWork, ready func() bool) {
	l := &b.lot
	if b.sched != nil {
		if ready() {
			return
		}
		b.recordPark(traces.KindPark, w)
		b.sched.Block(PointPark, ready)
		b.recordPark(traces.KindUnpark, w)
		return
	}
	l.mu.Lock()
	l.idle++
	l.nidle.Store(int32(l.idle))
	if hasWork() || l.stop.Load() {
		l.idle--
		l.nidle.Store(int32(l.idle))
		l.mu.Unlock()
		return
	}
	b.recordPark(traces.KindPark, w)
	for l.tokens == 0 && !l.stop.Load() {
		l.cond.Wait()
	}
	if l.tokens > 0 {
		l.tokens--
	}
	l.idle--
	l.nidle.Store(int32(l.idle))
	l.mu.Unlock()
	b.recordPark(traces.KindUnpark, w)
}

func (b *base) recordPark(k traces.Kind, w int) {
	if b.rec != nil {
		b.rec.Record(traces.Event{Seq: b.tick(), Kind: k, Worker: int32(w), Victim: -1})
	}
}
