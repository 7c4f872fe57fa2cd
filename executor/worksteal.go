package executor

import (
	"github.com/execspec/execspec/traces"
)

// WorkStealConfig configures a WorkSteal executor. The zero value works:
// two workers, local queues of 256, owner end LIFO, steal one, no LIFO slot,
// the global queue checked first every 61st take.
type WorkStealConfig struct {
	// Workers is the number of workers; 0 means 2.
	Workers int
	// LocalCap is the capacity of each local queue; 0 means 256. A push
	// onto a full local queue goes to the global queue (overflow).
	LocalCap int
	// OwnerFIFO makes the owner take from the head of its local queue (the
	// same end thieves take from) instead of the tail.
	OwnerFIFO bool
	// StealHalf makes a thief take half of the victim's queue instead of
	// one task: k = ceil(n/2) tasks from the steal end; the first is run,
	// the other k-1 go, in order, to the thief's local queue.
	StealHalf bool
	// LIFOSlot gives each worker a one-task slot: a task a worker spawns or
	// wakes goes into the slot when it is empty (else to the local queue),
	// and the slot is taken before the local queue, at most LIFOMax times
	// in a row. Thieves never take from a slot.
	LIFOSlot bool
	// LIFOMax bounds takes from the slot in a row; 0 means 3. After that
	// many, the next take looks for work as if the slot were empty (local
	// queue, global queue, steal) and falls back to the slot only if there
	// is none. This is what keeps two tasks that wake each other from
	// starving the rest.
	LIFOMax int
	// GlobalInterval: every GlobalInterval-th take of a worker (counting
	// its takes from 1) tries the global queue first, so that tasks there
	// are not starved by local work. 0 means 61; negative means never.
	GlobalInterval int
}

// WorkSteal is a work-stealing executor in the manner of Tokio's: W workers,
// each with a bounded local queue, and a global injector queue.
//
//   - SPAWN from outside a worker, and WAKE from outside, push on the global
//     queue; from inside a task on worker w, on w's local queue (or its LIFO
//     slot). A full local queue overflows to the global queue.
//   - A worker takes, in order: the global queue on every GlobalInterval-th
//     take (GLOBAL-STEAL); its LIFO slot (POLL-LOCAL, source lifo); its
//     local queue's owner end (POLL-LOCAL); the global queue's head
//     (GLOBAL-STEAL); another worker's steal end (WORKER-STEAL).
//   - A task NOTIFIED during its poll is re-queued at the polling worker's
//     local tail (not the slot).
//   - A worker with nothing to do parks on a condition variable, and is
//     unparked by any push other workers could take.
//
// A steal takes the global queue's lock, then the victim's (and, for steal
// half, the thief's, in index order), so that "the global queue is empty"
// holds at the moment of the steal: a trace replayed through the model sees
// WORKER-STEAL only when its premise held. The locks are ordered: global
// before local, locals by index.
//
// Create it with NewWorkSteal; the zero WorkSteal is not usable. Safe for
// concurrent use. Cost per task: one allocation (the task); a poll after
// that allocates nothing. Memory: LocalCap pointers per worker.
type WorkSteal struct {
	base
	cfg     WorkStealConfig
	locals  []localq
	hasWork []func() bool
	_       [64]byte // the global queue's lock and ends are written often:
	global  globalq  // keep them off the lines of the fields read on every take
	_       [64]byte
}

// NewWorkSteal returns a WorkSteal executor. Its workers start at the first
// Spawn.
func NewWorkSteal(c WorkStealConfig) *WorkSteal {
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.LocalCap <= 0 {
		c.LocalCap = 256
	}
	if c.LIFOMax <= 0 {
		c.LIFOMax = 3
	}
	if c.GlobalInterval == 0 {
		c.GlobalInterval = 61
	}
	e := &WorkSteal{cfg: c}
	e.init(c.Workers, e.work)
	e.stops = true
	e.addQueueBuf(&e.global.rb, &e.global.mu)
	e.locals = make([]localq, c.Workers)
	e.hasWork = make([]func() bool, c.Workers)
	for w := range e.locals {
		e.locals[w].init(c.LocalCap)
		e.locals[w].victim = w + 1
		e.hasWork[w] = func() bool { return e.workFor(w) }
	}
	return e
}

// Describe implements Describer: policy "worksteal" and its parameters.
func (e *WorkSteal) Describe() traces.Header {
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	cfg := map[string]int{
		"local-cap":       e.cfg.LocalCap,
		"owner-lifo":      b(!e.cfg.OwnerFIFO),
		"steal-half":      b(e.cfg.StealHalf),
		"lifo-slot":       b(e.cfg.LIFOSlot),
		"global-interval": max(e.cfg.GlobalInterval, 0),
	}
	if e.cfg.LIFOSlot {
		cfg["lifo-max"] = e.cfg.LIFOMax
	}
	return header("worksteal", e.cfg.Workers, "worksteal", cfg)
}

// workFor reports whether worker w could find a task: its slot, any local
// queue, or the global queue. Read without locks, from the size counters.
func (e *WorkSteal) workFor(w int) bool {
	if e.locals[w].slot != nil || e.global.size.Load() > 0 {
		return true
	}
	for i := range e.locals {
		if e.locals[i].size.Load() > 0 {
			return true
		}
	}
	return false
}

// Spawn implements Executor: SPAWN on the global queue from outside, on the
// spawning worker's local queue (or slot) from inside a task.
func (e *WorkSteal) Spawn(f Future) (Handle, error) {
	t, err := e.spawnTask(f, e)
	if err != nil {
		return nil, err
	}
	e.push(e.inWorker(), t, opSpawn, 0)
	return (*JoinHandle)(t), nil
}

// wake is the WAKE rule. Any goroutine may call it, any number of times.
func (e *WorkSteal) wake(t *task) {
	e.yield(PointWake)
	w := e.inWorker()
	for !e.wakeNoPush(t, w) && !e.push(w, t, opWake, 0) {
	}
}

type pushOp uint8

const (
	opSpawn   pushOp = iota // a new task
	opWake                  // WAITING → QUEUED; fails if t is not WAITING
	opRequeue               // RUNNING or NOTIFIED → QUEUED at the end of a poll
)

// push moves t into a queue together with the state transition of op, and
// records the event, whose sequence number is drawn under the lock of the
// queue pushed to. w is the pushing worker, -1 from outside: from outside
// the push goes to the global queue; from worker w to its slot (spawns and
// wakes, when enabled and empty), its local queue, or, when that is full,
// the global queue. Only worker w itself calls push with w ≥ 0, so nobody
// else can fill w's queue or slot meanwhile. For opWake it returns false,
// having done nothing, if t was not WAITING.
func (e *WorkSteal) push(w int, t *task, op pushOp, res traces.Result) bool {
	e.yield(PointPush)
	rec := e.rec != nil
	var s1, s2 uint64
	var l *localq
	q := traces.QueueGlobal
	toSlot, holdGlobal := false, true
	if w < 0 {
		e.global.mu.lock(&e.ctl)
	} else {
		l = &e.locals[w]
		l.mu.lock(&e.ctl)
		holdGlobal = false
		toSlot = e.cfg.LIFOSlot && op != opRequeue && l.slot == nil
		if !toSlot && l.full() {
			// Overflow: the global lock comes first in the lock order.
			// Only thieves can change l meanwhile, and only to make room.
			l.mu.unlock()
			e.global.mu.lock(&e.ctl)
			l.mu.lockNested()
			holdGlobal = true
		}
		if toSlot || !l.full() {
			q = traces.LocalQueue(w)
		}
	}
	unlock := func() {
		if l != nil {
			l.mu.unlock()
		}
		if holdGlobal {
			e.global.mu.unlock()
		}
	}
	switch op {
	case opSpawn:
		t.state.Store(stQueued)
		if rec {
			s1 = e.tick()
		}
	case opWake:
		old := t.state.Load()
		if old&stMask != stWaiting {
			unlock()
			return false
		}
		if rec {
			s1 = e.tick()
		}
		if !t.state.CompareAndSwap(old, to(old, stQueued)) {
			unlock()
			return false
		}
	case opRequeue:
		s2 = e.move2(t, stQueued)
		s1 = s2 - 1
	}
	switch {
	case toSlot:
		l.slot = t
	case q == traces.QueueGlobal:
		e.global.push(t)
	default:
		l.pushTail(t)
	}
	if rec {
		// Written before the unlock: once the task is in the queue, it may
		// run and finish, and Wait return, at any moment.
		switch op {
		case opSpawn:
			e.emitPush(&e.global.rb, w, evPush(traces.KindSpawn, s1, t, w).WithQueueOp(q, s1-1))
		case opWake:
			e.emitPush(&e.global.rb, w, evPush(traces.KindWake, s1, t, w).WithOutcome(traces.OutcomeScheduled).WithQueueOp(q, s1-1))
		case opRequeue:
			e.emit(w, evPoll(traces.KindPollEnd, s1, t, w).WithResult(res))
			e.emitPush(&e.global.rb, w, evPush(traces.KindRequeue, s2, t, w).WithQueueOp(q, s1-1))
		}
	}
	unlock()
	if rec {
		e.syncPush(&e.global.rb, w)
	}
	if !toSlot {
		e.lot.notify()
	}
	return true
}

// take finds worker w's next task, in the order the type's doc states, and
// makes it RUNNING on w. Only worker w calls it.
func (e *WorkSteal) take(w int) *task {
	l := &e.locals[w]
	if gi := e.cfg.GlobalInterval; gi > 0 && (l.takes+1)%gi == 0 {
		if t := e.takeGlobal(w); t != nil {
			return t
		}
	}
	if l.slot != nil && l.lifoRun < e.cfg.LIFOMax {
		return e.takeLocal(w, true)
	}
	if l.size.Load() > 0 {
		if t := e.takeLocal(w, false); t != nil {
			return t
		}
	}
	if e.global.size.Load() > 0 {
		if t := e.takeGlobal(w); t != nil {
			return t
		}
	}
	if len(e.locals) > 1 {
		if t := e.steal(w); t != nil {
			return t
		}
	}
	if l.slot != nil {
		return e.takeLocal(w, true)
	}
	return nil
}

// running moves a task just popped from a queue to RUNNING. Called under
// the lock of the queue it came from. When recording, it draws two numbers
// at once and returns the second: the first is the take's Seq, the second
// the Seq of the poll's beginning and the take's Return tick.
func (b *base) running(t *task) uint64 { return b.move2(t, stRunning) }

// move2 moves t to state s, whatever it was, by the task's CAS loop (see
// task): when recording, each attempt draws two numbers of the clock
// between its load and its CAS, and the second of the attempt that
// succeeded is returned (0 when not recording). The caller's two events
// are the move and the one it opens: a poll's end and the re-queue, a take
// and the poll's beginning.
func (b *base) move2(t *task, s uint64) uint64 {
	var seq uint64
	for {
		old := t.state.Load()
		if b.rec != nil {
			seq = b.clock.Add(2)
		}
		if t.state.CompareAndSwap(old, to(old, s)) {
			return seq
		}
	}
}

// takeLocal is POLL-LOCAL: from the slot, or from the owner end of w's
// local queue (the tail, or the head with OwnerFIFO). Owner only; under w's
// local lock, which it shares with thieves taking from the other end.
func (e *WorkSteal) takeLocal(w int, slot bool) *task {
	l := &e.locals[w]
	e.yield(PointPop)
	l.mu.lock(&e.ctl)
	var t *task
	src := traces.SourceLocal
	switch {
	case slot:
		t, l.slot = l.slot, nil
		src = traces.SourceLIFO
	case e.cfg.OwnerFIFO:
		t = l.popHead()
	default:
		t = l.popTail()
	}
	if t == nil {
		l.mu.unlock()
		return nil
	}
	seq := e.running(t)
	l.mu.unlock()
	l.takes++
	if slot {
		l.lifoRun++
	} else {
		l.lifoRun = 0
	}
	if e.rec != nil {
		e.stashTake(w, src, -1, seq)
	}
	return t
}

// takeGlobal is GLOBAL-STEAL: the head of the global queue. Only worker w
// calls it; the pop and the CAS to RUNNING happen under the global lock,
// which orders them after the push that queued the task.
func (e *WorkSteal) takeGlobal(w int) *task {
	e.yield(PointPop)
	e.global.mu.lock(&e.ctl)
	t := e.global.pop()
	if t == nil {
		e.global.mu.unlock()
		return nil
	}
	seq := e.running(t)
	e.global.mu.unlock()
	l := &e.locals[w]
	l.takes++
	l.lifoRun = 0
	if e.rec != nil {
		e.stashTake(w, traces.SourceGlobal, -1, seq)
	}
	return t
}

// steal is WORKER-STEAL: from the steal end (head) of another worker's
// local queue, trying victims round-robin from where w last looked. It
// holds the global queue's lock throughout, and takes from the global queue
// instead if that is not empty, so that the premise "global = ∅" holds when
// the steal takes effect.
func (e *WorkSteal) steal(w int) *task {
	n := len(e.locals)
	l := &e.locals[w]
	any := false
	for i := range e.locals {
		if i != w && e.locals[i].size.Load() > 0 {
			any = true
			break
		}
	}
	if !any {
		return nil
	}
	e.yield(PointSteal)
	rec := e.rec != nil
	e.global.mu.lock(&e.ctl)
	if t := e.global.pop(); t != nil {
		seq := e.running(t)
		e.global.mu.unlock()
		l.takes++
		l.lifoRun = 0
		if rec {
			e.stashTake(w, traces.SourceGlobal, -1, seq)
		}
		return t
	}
	for i := 0; i < n; i++ {
		v := (l.victim + i) % n
		vq := &e.locals[v]
		if v == w || vq.size.Load() == 0 {
			continue
		}
		half := e.cfg.StealHalf
		if half && w < v {
			l.mu.lockNested()
		}
		vq.mu.lockNested()
		if half && w > v {
			l.mu.lockNested()
		}
		k := vq.n
		if k == 0 {
			vq.mu.unlock()
			if half {
				l.mu.unlock()
			}
			continue
		}
		t := vq.popHead()
		moved := 0
		if half {
			// The thief's own queue is empty (it found nothing there), and
			// ceil(k/2)-1 < capacity, so the moved tasks fit.
			for j := 1; j < (k+1)/2; j++ {
				l.pushTail(vq.popHead())
				moved++
			}
		}
		seq := e.running(t)
		vq.mu.unlock()
		if half {
			l.mu.unlock()
		}
		e.global.mu.unlock()
		l.victim = v + 1
		l.takes++
		l.lifoRun = 0
		if rec {
			e.stashTake(w, traces.SourceSteal, v, seq)
		}
		if moved > 0 {
			e.lot.notify()
		}
		return t
	}
	e.global.mu.unlock()
	return nil
}

// work is the loop of worker w (base.loop), parking with its own view of
// the queues.
func (e *WorkSteal) work(w int) { e.loop(w, e.take, e.hasWork[w], e.run) }

// run polls t once and applies the poll's outcome: DONE, WAITING, or a
// re-queue on w's local queue if it was NOTIFIED meanwhile. Only worker w
// calls it, for a task it took.
func (e *WorkSteal) run(t *task, w int, cx *Context) {
	v, ready, err := e.pollStep(t, w, cx)
	if err != nil {
		e.complete(t, w, nil, err)
		return
	}
	if ready {
		e.complete(t, w, v, nil)
		return
	}
	if !e.suspend(t, w) {
		e.push(w, t, opRequeue, traces.ResultPending)
	}
}
