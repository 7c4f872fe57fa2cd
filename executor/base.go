package executor

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/executor/internal/eventbuf"
	"github.com/execspec/execspec/internal/goid"
	"github.com/execspec/execspec/traces"
)

// base is what every built-in executor shares: the Scheduler hook, the
// recorder and its logical clock, task ids, the count of unfinished tasks,
// the identities of the worker goroutines, the parking lot and shutdown.
type base struct {
	// Read on every operation, written once (ended: at the end of Close):
	// these share cache lines with nothing that is written often.
	ctl
	rec      Recorder
	sink     eventbuf.Sink // rec, and rec as a BatchRecorder when it takes batches and no Scheduler is set
	ended    atomic.Bool   // Close has handed every buffer over: from now on, at once
	closed   atomic.Bool
	started  atomic.Bool
	nworkers int
	work     func(w int)      // the loop of worker w (init)
	gs       []atomic.Uintptr // worker goroutine identities (goid.Curg), 0 before start
	wk       []workerLocal    // wk[w] is touched only by worker w
	quiet    func() bool
	stops    bool // Close records a stop (the executor's traces are format v1.1)

	_     [64]byte
	clock atomic.Uint64 // the one logical clock of this executor's events
	_     [56]byte

	outMu  sync.Mutex
	out    eventbuf.Shared    // events of goroutines outside the workers, under outMu
	shared []*eventbuf.Shared // out, and the queues' buffers of pushes from outside

	ids     atomic.Int64 // last task id handed out
	pending atomic.Int64 // spawned and not DONE
	late    atomic.Int64 // wakes that found their task DONE

	lot     lot
	workers group

	qmu   sync.Mutex // with qcond, wakes Wait when pending drops to zero
	qcond sync.Cond
}

// init sizes b for workers workers (1 to MaxWorkers), whose loop is work.
func (b *base) init(workers int, work func(w int)) {
	workers = min(max(workers, 1), MaxWorkers)
	b.nworkers = workers
	b.work = work
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
		b.setRecorder(r)
	}
}

// MaxWorkers is the most workers a built-in executor runs; a larger count
// asks for this many. It is the largest worker a traces.Packed can hold.
const MaxWorkers = traces.MaxPackedWorker

// SetScheduler implements Controllable. Call it before the first Spawn;
// once the workers run it does nothing (they were not started under it).
func (b *base) SetScheduler(s Scheduler) {
	if !b.started.Load() {
		b.sched = s
		b.setRecorder(b.rec) // batches or not, see record.go
	}
}

// LateWakes returns how many wakes found their task already DONE (ignored).
func (b *base) LateWakes() int64 { return b.late.Load() }

// tick draws the next number from the executor's logical clock: an event's
// Seq, unique. Only called when recording.
func (b *base) tick() uint64 { return b.clock.Add(1) }

// The Call and Return ticks of a queue operation. Every queue operation
// runs under its queue's lock and draws its numbers from the clock inside
// that critical section; that is where it takes effect. Its Call tick is
// the clock's value just before its own draw (its first number minus one),
// and its Return tick is its Seq for a push and, for a take, the number
// drawn with it for the poll's beginning. [Call, Return] thus contains the
// instant the operation took effect, which is all a linearizability check
// needs, and it is as narrow as it can be: the check is as strict as it
// can be, and its search has the fewest orders to try.
//
// Why not read the clock when the operation begins, before taking the
// lock: every worker and every spawning goroutine writes the clock's cache
// line, and each access costs a transfer between cores. A read before the
// lock was a third of what recording cost.

// workerLocal is the state only worker w touches, padded so that workers
// do not share cache lines.
type workerLocal struct {
	cur *task // the task being polled, for a Goexit in its poll

	// The take just made, recorded with the poll's beginning.
	tkSeq    uint64
	tkVictim int32
	tkSrc    traces.Source

	rb eventbuf.Worker // w's events not yet handed to the Recorder

	_ [64]byte
}

// stashTake keeps the take event of worker w until recordTakeAndBegin.
func (b *base) stashTake(w int, src traces.Source, victim int, seq uint64) {
	l := &b.wk[w]
	l.tkSeq, l.tkVictim, l.tkSrc = seq, int32(victim), src
}

// recordTakeAndBegin records worker w's stashed take of t and the beginning
// of its poll, whose numbers were drawn together (see running): r-1 for the
// take and r for the poll's beginning, which is also the take's Return
// tick; its Call tick is r-2.
func (b *base) recordTakeAndBegin(t *task, w int) {
	l := &b.wk[w]
	r := l.tkSeq
	b.emit(w, traces.PackedEvent(traces.KindTake, r-1, t.id, int32(w)).WithTake(l.tkSrc, l.tkVictim))
	b.emit(w, evPoll(traces.KindPollBegin, r, t, w))
	b.sync(w)
}

// ev returns the packed event with the fields every event has.
func ev(k traces.Kind, seq uint64, t *task, w int) traces.Packed {
	return traces.PackedEvent(k, seq, t.id, int32(w))
}

// evPush is ev for a spawn, wake or requeue: with t's priority when the
// executor records it (format v1.1).
func evPush(k traces.Kind, seq uint64, t *task, w int) traces.Packed {
	p := traces.PackedEvent(k, seq, t.id, int32(w))
	if t.prioRec {
		p = p.WithPriority(int32(t.key))
	}
	return p
}

// evPoll is ev for a poll-begin, poll-end or register: with the id of the
// future the poll drives when the executor records it (format v1.1).
// ev, evPush and evPoll are three functions, not one with a switch on k,
// so that each stays within the compiler's inlining budget.
func evPoll(k traces.Kind, seq uint64, t *task, w int) traces.Packed {
	p := traces.PackedEvent(k, seq, t.id, int32(w))
	if t.future != 0 {
		p = p.WithFuture(t.future)
	}
	return p
}

// inWorker returns the index of the worker the caller runs on, or -1. It
// costs a few nanoseconds per worker.
func (b *base) inWorker() int {
	if !b.started.Load() {
		return -1
	}
	return workerOf(b.gs)
}

// start starts the workers once, at the first Spawn (so that SetScheduler
// and SetRecorder, called before it, apply to them).
func (b *base) start() {
	if b.started.Load() || !b.started.CompareAndSwap(false, true) {
		return
	}
	for w := 0; w < b.nworkers; w++ {
		b.startWorker(w, b.work)
	}
}

// loop is the loop of worker w of a built-in executor: take a task (take
// records its take's Seq), record the take and the poll's beginning, run
// it (run polls it and applies the outcome), repeat; when take finds
// nothing, park until hasWork (w's view of the queues) finds work; return
// once the executor shuts down with nothing left. One Context serves
// every poll of the worker (run resets it).
func (b *base) loop(w int, take func(w int) *task, hasWork func() bool, run func(t *task, w int, cx *Context)) {
	cx := NewContext(Waker{}, w)
	for {
		t := take(w)
		if t == nil {
			if b.lot.stop.Load() {
				return
			}
			b.yield(PointPark)
			b.park(w, hasWork)
			continue
		}
		if b.rec != nil {
			b.recordTakeAndBegin(t, w)
		}
		run(t, w, cx)
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
		b.gs[w].Store(goid.Curg())
		run(w)
		normal = true
		// The runtime reuses a goroutine's descriptor once it exits: a
		// goroutine started later must not pass for worker w.
		b.gs[w].Store(0)
		if b.rec != nil {
			b.wk[w].rb.Deliver(&b.sink)
		}
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

// spawnTask is the start of SPAWN common to every executor on a base:
// the yield, the task counted (admit: ErrNilFuture, ErrClosed), the
// workers started at the first spawn, and the new task of owner o, IDLE,
// for the caller to queue.
func (b *base) spawnTask(f Future, o owner) (*task, error) {
	b.yield(PointSpawn)
	if err := b.admit(f); err != nil {
		return nil, err
	}
	if !b.started.Load() {
		b.start()
	}
	return b.newTask(f, o), nil
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
	if b.batching() {
		if testHookWaited != nil {
			testHookWaited()
		}
		b.flushAll()
	}
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
	if b.rec != nil {
		if b.stops {
			b.recordStop()
		}
		b.ended.Store(true) // a wake after this is handed over at once
		b.deliverShared()
	}
	return nil
}

// recordStop records the executor's orderly stop (format v1.1, reason
// shutdown) once every worker has returned: every task is DONE, so the only
// events that can come later are late wakes through wakers that outlived
// the executor, recorded after it (outcome late), which a trace allows
// after an orderly stop and counts.
func (b *base) recordStop() {
	b.outMu.Lock()
	b.out.Put(traces.PackedEvent(traces.KindStop, b.tick(), 0, -1))
	b.outMu.Unlock()
}

// pollOn calls t's future once on worker w, turning a panic into a
// *PanicError with the stack of the polling goroutine. t is w's current
// task for the length of the poll: a Goexit in the future then fails t,
// and a new goroutine takes the worker's place (see startWorker). The
// deferred recover is open-coded by the compiler: it allocates nothing when
// there is no panic. Only worker w calls it.
func (b *base) pollOn(t *task, w int, cx *Context) (v any, ready bool, perr *PanicError) {
	l := &b.wk[w]
	l.cur = t
	defer func() {
		if r := recover(); r != nil {
			l.cur = nil
			perr = &PanicError{Task: t.id, Value: r, Stack: debug.Stack()}
		}
	}()
	v, ready = t.fut.Poll(cx)
	l.cur = nil // not in the deferred call: a Goexit must leave t there
	return v, ready, nil
}

// pollStep is one poll of t by worker w of a built-in executor: the yield
// before it, the poll with cx carrying t's waker (reset to none after
// it), and its outcome: the value, whether it is Ready, or the failure (a
// panic or a Failed value, its panic event recorded), which the caller
// applies.
func (b *base) pollStep(t *task, w int, cx *Context) (v any, ready bool, err error) {
	b.yield(PointPoll)
	cx.Reset(t.waker(), w)
	v, ready, perr := b.pollOn(t, w, cx)
	cx.Reset(Waker{}, w)
	if err := failure(t, v, ready, perr); err != nil {
		b.recordFailure(t, w, err)
		return nil, ready, err
	}
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
// recorded by the caller with the transition that follows it). A Failed
// value in a format v1.1 trace has none: its PollEnd's result error says
// it, and a panic event would have it reported as a panic too.
func (b *base) recordFailure(t *task, w int, err error) {
	if b.rec == nil {
		return
	}
	if _, ok := err.(*FailedError); ok && b.stops {
		return
	}
	var d string
	switch e := err.(type) {
	case *PanicError:
		d = fmt.Sprintf("panic: %v\n%s", e.Value, e.Stack)
	default:
		d = err.Error()
	}
	e := ev(traces.KindPanic, b.tick(), t, w).Event()
	e.Detail = d
	b.rec.Record(e)
}

// failResult is the poll-end result of a failed poll: error for a Failed
// value in a format v1.1 trace, panic otherwise.
func (b *base) failResult(err error) traces.Result {
	if _, ok := err.(*FailedError); ok && b.stops {
		return traces.ResultError
	}
	return traces.ResultPanic
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
	if t.made != 0 {
		t.made++
	}
	return true
}

// complete moves a RUNNING or NOTIFIED task to DONE (TASK-COMPLETE, or a
// failed task), records the end of its poll, and publishes the result.
// Called by the worker running t.
func (b *base) complete(t *task, w int, v any, err error) {
	res := traces.ResultReady
	if err != nil {
		res = b.failResult(err)
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
		b.emit(w, evPoll(traces.KindPollEnd, seq, t, w).WithResult(res))
		b.publish(w) // before anyone can learn that t is DONE
		b.sync(w)
	}
	t.finish(v, err)
	b.taskDone()
}

// suspend tries the first case of TASK-SUSPEND: RUNNING → WAITING. It
// returns false if the task was NOTIFIED during the poll; then the caller
// re-queues it (the wake is not lost). Only the worker running t calls it.
//
// When batching, the CAS and the writing of its event happen under w's
// buffer mutex: a wake may act on WAITING at once, and the task finish,
// and Wait return, before the event would otherwise be published.
func (b *base) suspend(t *task, w int) bool {
	var r *eventbuf.Worker
	if b.batching() {
		r = &b.wk[w].rb
		r.Mu.Lock()
	}
	ok := b.suspendCAS(t, w)
	if r != nil {
		b.publish(w)
		r.Mu.Unlock()
	}
	if ok && b.rec != nil {
		b.sync(w)
	}
	return ok
}

func (b *base) suspendCAS(t *task, w int) bool {
	for {
		old := t.state.Load()
		if old&stMask != stRunning {
			return false
		}
		// The event is made before the CAS: once t is WAITING a wake may
		// hand it to another worker, whose re-queue writes t.future.
		var ev traces.Packed
		if b.rec != nil {
			ev = evPoll(traces.KindPollEnd, b.tick(), t, w).WithResult(traces.ResultPending)
		}
		if t.state.CompareAndSwap(old, to(old, stWaiting)) {
			if b.rec != nil {
				b.emitHere(w, ev)
			}
			return true
		}
	}
}

// emitHere writes p into w's buffer, or into the outside buffer whose mutex
// the caller holds.
func (b *base) emitHere(w int, p traces.Packed) {
	if w >= 0 {
		b.wk[w].rb.Put(p)
	} else {
		b.out.Put(p)
	}
}

// wakeNoPush handles a wake that finds the task anywhere but WAITING:
// RUNNING → NOTIFIED, QUEUED or NOTIFIED → coalesced (a version bump, so
// that the wake is ordered with the task's other transitions and everything
// before it happens before the next poll), DONE → late. It returns false if
// the task is WAITING: then the caller must schedule it under its queue's
// lock.
//
// The wake holds its buffer's mutex from its draw until its event is
// written (and, for a worker's buffer, published): the task may finish, and
// Wait return, the moment the CAS is done, and Wait collects the buffers
// under their mutexes. Without batching only the outside buffer needs it,
// as several goroutines write it.
func (b *base) wakeNoPush(t *task, w int) bool {
	if b.rec == nil {
		return b.wakeState(t, w, false)
	}
	var l sync.Locker
	switch {
	case w < 0:
		l = &b.outMu
	case b.batching():
		l = &b.wk[w].rb.Mu
	}
	if l != nil {
		l.Lock()
	}
	done := b.wakeState(t, w, true)
	b.publish(w)
	if l != nil {
		l.Unlock()
	}
	if done {
		b.sync(w)
	}
	return done
}

// wakeState is wakeNoPush, recording when rec; the caller holds the
// outside buffer's mutex when w is -1 and rec.
func (b *base) wakeState(t *task, w int, rec bool) bool {
	for {
		old := t.state.Load()
		s := old & stMask
		if s == stWaiting {
			return false
		}
		var seq uint64
		if rec {
			seq = b.tick()
		}
		out := traces.OutcomeCoalesced
		switch s {
		case stDone:
			b.late.Add(1)
			out = traces.OutcomeLate
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
		if rec {
			if testHookWoke != nil {
				testHookWoke()
			}
			b.emitHere(w, evPush(traces.KindWake, seq, t, w).WithOutcome(out))
		}
		return true
	}
}

// header builds a Describe result.
func header(name string, workers int, policy string, cfg map[string]int) traces.Header {
	return traces.Header{Format: traces.Format, Version: traces.Version, Minor: 1, Executor: name, Workers: workers, Policy: policy, Config: cfg}
}

// park blocks worker w until it is notified or the executor shuts down,
// unless hasWork (checked after w announced itself idle) finds work. Under a
// Scheduler it is a Block on the lot's token (lot.woken). It records Park
// and Unpark when w actually slept.
func (b *base) park(w int, hasWork func() bool) {
	l := &b.lot
	if b.sched == nil && b.batching() {
		if testHookIdle != nil {
			testHookIdle()
		}
		b.deliverIdle(w)
	}
	l.mu.Lock()
	l.setIdle(+1)
	if hasWork() || l.stop.Load() {
		l.setIdle(-1)
		l.mu.Unlock()
		return
	}
	if b.sched != nil {
		// Under a Scheduler as off: the worker sleeps until a notify
		// hands it a token (or the executor stops), not merely until
		// there is work. A Block on hasWork would wake it for work nobody
		// told it about, and hide a push that forgets to notify (a worker
		// left asleep while work waits), which the work-conservation
		// check exists to find. l.mu is released first: recording may be
		// a yield point (the Scheduler's recorder), and no yield happens
		// inside a critical section.
		l.mu.Unlock()
		b.recordPark(traces.KindPark, w)
		b.sched.Block(PointPark, l.woken)
		l.mu.Lock()
	} else {
		b.recordPark(traces.KindPark, w)
		for l.tokens == 0 && !l.stop.Load() {
			l.cond.Wait()
		}
	}
	if l.tokens > 0 {
		l.tokens--
	}
	l.setIdle(-1)
	l.mu.Unlock()
	b.recordPark(traces.KindUnpark, w)
}

func (b *base) recordPark(k traces.Kind, w int) {
	if b.rec != nil {
		b.emit(w, traces.PackedEvent(k, b.tick(), 0, int32(w)))
		b.publish(w)
		b.sync(w)
	}
}
