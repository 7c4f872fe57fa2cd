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

// Deep-state mutants: bugs that show only in states that random schedules
// rarely reach (a full local queue robbed, a wake in the window between a
// registration and the Pending return on a worker that is robbed, ...).
// They vary deepExec, a small work-stealing executor that follows the
// model's rules one step at a time and reports every step, so that its
// runs project onto the closed model (`verify cover`): its trace is
// checked, and the coverage report shows which states were reached.
//
// A panicking future fails its task (recorded, never re-run); the worker
// goes on. The base is not fair: like the model configuration it follows
// (no global-check interval), a task that wakes itself at every poll keeps
// its worker, and a task in the global queue may wait for ever while local
// work lasts; the fairness property does not hold for it by design.
//
// deepExec holds one lock for all its queues; every event is recorded under
// it, so its Seq order is the order of the effects. Yield points lie
// between the steps (before a take, a poll, a wake, after a registration,
// before a park), never inside the lock. Policy: worksteal with local-cap
// Cap, owner end LIFO, steal one from the steal end (victims in order from
// the next worker), no global-check interval, no LIFO slot.

// DeepConfig configures the base of the deep-state mutants. Zero fields
// mean 2 workers and local capacity 2.
type DeepConfig struct {
	Workers  int
	LocalCap int
}

type deepBug uint8

const (
	deepRequeueToVictim   deepBug = iota + 1 // a NOTIFIED task stolen from a worker still polling is re-queued onto that worker's deque
	deepRobbedNotifyLost                     // a NOTIFIED task whose worker was robbed after the registration is not re-queued
	deepFullStealOwnerEnd                    // a steal from a full deque whose owner polls a registered task takes the owner end
	deepRequeueOverfill                      // a NOTIFIED re-queue onto a full deque is pushed beyond capacity
	deepBusyNotifyGlobal                     // a task NOTIFIED while every worker polls a registered task is re-queued onto the global queue
	deepWindowWakeDropped                    // a wake between registration and Pending is dropped when the global queue and a deque hold tasks
)

// DeepCatalogue returns the six deep-state mutants, each deepExec with one
// bug, and the name of the state class where it shows.
func DeepCatalogue() []Executor {
	d := func(b deepBug) func() executor.Executor {
		return func() executor.Executor { return newDeep(DeepConfig{}, b) }
	}
	return []Executor{
		{"requeue-to-victim", "a task stolen from a worker that is still polling, then NOTIFIED during its poll, is re-queued onto that worker's deque", "deep w=2", d(deepRequeueToVictim)},
		{"robbed-notify-lost", "a wake between registration and Pending is lost when the polling worker's deque was robbed after the registration", "deep w=2", d(deepRobbedNotifyLost)},
		{"full-steal-owner-end", "a thief robbing a full deque whose owner polls a registered task takes the owner's end instead of the steal end", "deep w=2", d(deepFullStealOwnerEnd)},
		{"requeue-overfill", "a NOTIFIED task re-queued onto a full deque is pushed beyond its capacity instead of overflowing to the global queue", "deep w=2", d(deepRequeueOverfill)},
		{"busy-notify-global", "a task NOTIFIED while every worker polls a registered task is re-queued onto the global queue instead of its worker's deque", "deep w=2", d(deepBusyNotifyGlobal)},
		{"window-wake-dropped", "a wake between registration and Pending is dropped as coalesced when both the global queue and a deque hold tasks", "deep w=2", d(deepWindowWakeDropped)},
	}
}

// NewDeep returns the correct base of the deep-state mutants.
func NewDeep(c DeepConfig) executor.Executor { return newDeep(c, 0) }

type deepState uint8

const (
	dQueued deepState = iota + 1
	dRunning
	dWaiting
	dNotified
	dDone
)

type deepTask struct {
	id    int64
	fut   executor.Future
	ex    *deepExec
	state deepState // guarded by ex.mu
	reg   bool      // registered in the current poll; guarded by ex.mu
	stole int       // the victim it was stolen from for the current poll, -1; guarded by ex.mu
	value any
	err   error
	done  bool // guarded by ex.mu
}

type deepExec struct {
	ctl
	bug     deepBug
	cfg     DeepConfig
	started sync.Once

	mu      sync.Mutex
	cond    sync.Cond // uncontrolled parking and Wait
	global  []*deepTask
	local   [][]*deepTask
	cur     []*deepTask
	robbed  []bool // per worker: its deque was robbed during its current poll
	gids    []atomic.Int64
	live    int
	closed  bool
	exited  int
	nextID  int64
	seq     uint64
	rec     executor.Recorder
	pending []traces.Event // recorded under mu, delivered after it
}

func newDeep(c DeepConfig, b deepBug) *deepExec {
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.LocalCap <= 0 {
		c.LocalCap = 2
	}
	ex := &deepExec{bug: b, cfg: c}
	ex.cond.L = &ex.mu
	ex.local = make([][]*deepTask, c.Workers)
	ex.cur = make([]*deepTask, c.Workers)
	ex.robbed = make([]bool, c.Workers)
	ex.gids = make([]atomic.Int64, c.Workers)
	return ex
}

// SetRecorder implements executor.Reporter. Call it before the first Spawn.
func (ex *deepExec) SetRecorder(r executor.Recorder) { ex.rec = r }

// Describe implements executor.Describer.
func (ex *deepExec) Describe() traces.Header {
	return traces.Header{Format: traces.Format, Version: traces.Version, Executor: "deep", Workers: ex.cfg.Workers, Policy: "worksteal",
		Config: map[string]int{"local-cap": ex.cfg.LocalCap, "owner-lifo": 1, "steal-half": 0, "global-interval": 0, "lifo-slot": 0}}
}

// emit records an event; the caller holds mu. flush delivers them.
func (ex *deepExec) emit(e traces.Event) {
	if ex.rec != nil {
		ex.pending = append(ex.pending, numbered(e, &ex.seq))
	}
}

// unlock releases mu and delivers the events recorded under it.
func (ex *deepExec) unlock() {
	evs := ex.pending
	ex.pending = nil
	ex.mu.Unlock()
	for _, e := range evs {
		ex.rec.Record(e)
	}
}

func (ex *deepExec) worker() int {
	g := goid()
	for w := range ex.gids {
		if ex.gids[w].Load() == g {
			return w
		}
	}
	return -1
}

// push puts t on w's deque (the global queue for w < 0, or when full) and
// returns the queue; the caller holds mu.
func (ex *deepExec) push(w int, t *deepTask) traces.Queue {
	if w >= 0 && len(ex.local[w]) < ex.cfg.LocalCap {
		ex.local[w] = append(ex.local[w], t)
		return traces.LocalQueue(w)
	}
	ex.global = append(ex.global, t)
	return traces.QueueGlobal
}

// Spawn implements executor.Executor: onto the global queue (the deep
// mutants' workloads spawn from outside).
func (ex *deepExec) Spawn(f executor.Future) (executor.Handle, error) {
	if f == nil {
		return nil, executor.ErrNilFuture
	}
	ex.start()
	ex.yield(executor.PointSpawn)
	ex.mu.Lock()
	if ex.closed {
		ex.mu.Unlock()
		return nil, executor.ErrClosed
	}
	ex.nextID++
	t := &deepTask{id: ex.nextID, fut: f, ex: ex, state: dQueued, stole: -1}
	ex.live++
	q := ex.push(ex.worker(), t)
	ex.emit(traces.Event{Kind: traces.KindSpawn, Task: t.id, Worker: int32(ex.worker()), Queue: q})
	ex.cond.Broadcast()
	ex.unlock()
	return deepHandle{t}, nil
}

func (ex *deepExec) start() {
	ex.started.Do(func() {
		for w := range ex.cfg.Workers {
			ex.goWorker(func() { ex.work(w) })
		}
	})
}

// take finds w's next task, under mu: the owner end of its deque, the head
// of the global queue, the steal end of another deque.
func (ex *deepExec) take(w int) *deepTask {
	var t *deepTask
	src, victim := traces.SourceLocal, -1
	switch q := ex.local[w]; {
	case len(q) > 0:
		t, ex.local[w] = q[len(q)-1], q[:len(q)-1]
	case len(ex.global) > 0:
		t, ex.global = ex.global[0], ex.global[1:]
		src = traces.SourceGlobal
	default:
		for i := 1; i < ex.cfg.Workers && t == nil; i++ {
			v := (w + i) % ex.cfg.Workers
			q := ex.local[v]
			if len(q) == 0 {
				continue
			}
			if ex.bug == deepFullStealOwnerEnd && len(q) == ex.cfg.LocalCap && ex.cur[v] != nil && ex.cur[v].reg {
				t, ex.local[v] = q[len(q)-1], q[:len(q)-1]
			} else {
				t, ex.local[v] = q[0], q[1:]
			}
			src, victim = traces.SourceSteal, v
			if ex.cur[v] != nil && ex.cur[v].reg {
				ex.robbed[v] = true // robbed after the registration
			}
		}
	}
	if t == nil {
		return nil
	}
	t.state, t.reg, t.stole = dRunning, false, victim
	ex.cur[w] = t
	ex.robbed[w] = false
	ex.emit(traces.Event{Kind: traces.KindTake, Task: t.id, Worker: int32(w), Source: src, Victim: int32(victim)})
	ex.emit(traces.Event{Kind: traces.KindPollBegin, Task: t.id, Worker: int32(w)})
	return t
}

func (ex *deepExec) hasLocal() bool {
	for _, q := range ex.local {
		if len(q) > 0 {
			return true
		}
	}
	return false
}

func (ex *deepExec) hasWork() bool {
	if len(ex.global) > 0 {
		return true
	}
	for _, q := range ex.local {
		if len(q) > 0 {
			return true
		}
	}
	return false
}

func (ex *deepExec) work(w int) {
	ex.gids[w].Store(goid())
	cx := executor.NewContext(executor.Waker{}, w)
	for {
		ex.yield(executor.PointPop)
		ex.mu.Lock()
		t := ex.take(w)
		if t == nil {
			if ex.closed && ex.live == 0 {
				ex.exited++
				ex.cond.Broadcast()
				ex.unlock()
				return
			}
			ex.unlock()
			ex.park()
			continue
		}
		ex.unlock()
		ex.yield(executor.PointPoll)
		cx.Reset(executor.NewWaker(t), w)
		v, ready, perr := deepPoll(t, cx)
		cx.Reset(executor.Waker{}, w)
		ex.mu.Lock()
		if perr != nil {
			ex.emit(traces.Event{Kind: traces.KindPanic, Task: t.id, Worker: int32(w), Detail: fmt.Sprint(perr)})
			ex.cur[w] = nil
			t.state, t.done = dDone, true
			t.err = &executor.PanicError{Task: t.id, Value: perr, Stack: debug.Stack()}
			ex.live--
			ex.emit(traces.Event{Kind: traces.KindPollEnd, Task: t.id, Worker: int32(w), Result: traces.ResultPanic})
			ex.cond.Broadcast()
			ex.unlock()
			continue
		}
		ex.end(w, t, v, ready)
		ex.cond.Broadcast()
		ex.unlock()
	}
}

// deepPoll polls t once; a panic is returned, not propagated (the task
// fails, the worker goes on), except the Scheduler's own unwinding.
func deepPoll(t *deepTask, cx *executor.Context) (v any, ready bool, perr any) {
	defer func() {
		if r := recover(); r != nil {
			if control.IsAbort(r) {
				panic(r)
			}
			perr = r
		}
	}()
	v, ready = t.fut.Poll(cx)
	return v, ready, nil
}

// end applies the end of w's poll of t, under mu: TASK-COMPLETE, or
// TASK-SUSPEND (WAITING, or a re-queue of a NOTIFIED task).
func (ex *deepExec) end(w int, t *deepTask, v any, ready bool) {
	busy := true // every worker polls a registered task
	for _, c := range ex.cur {
		busy = busy && c != nil && c.reg
	}
	ex.cur[w] = nil
	if ready {
		t.state, t.value, t.done = dDone, v, true
		ex.live--
		ex.emit(traces.Event{Kind: traces.KindPollEnd, Task: t.id, Worker: int32(w), Result: traces.ResultReady})
		return
	}
	ex.emit(traces.Event{Kind: traces.KindPollEnd, Task: t.id, Worker: int32(w), Result: traces.ResultPending})
	if t.state != dNotified {
		t.state = dWaiting
		return
	}
	var q traces.Queue
	switch {
	case ex.bug == deepRobbedNotifyLost && ex.robbed[w]:
		t.state = dWaiting // the bug: the notification is lost
		return
	case ex.bug == deepRequeueToVictim && t.stole >= 0 && ex.cur[t.stole] != nil && len(ex.local[t.stole]) < ex.cfg.LocalCap:
		ex.local[t.stole] = append(ex.local[t.stole], t)
		q = traces.LocalQueue(t.stole)
	case ex.bug == deepRequeueOverfill && len(ex.local[w]) >= ex.cfg.LocalCap:
		ex.local[w] = append(ex.local[w], t)
		q = traces.LocalQueue(w)
	case ex.bug == deepBusyNotifyGlobal && busy:
		ex.global = append(ex.global, t)
		q = traces.QueueGlobal
	default:
		q = ex.push(w, t)
	}
	t.state = dQueued
	ex.emit(traces.Event{Kind: traces.KindRequeue, Task: t.id, Worker: int32(w), Queue: q})
}

func (ex *deepExec) park() {
	ex.yield(executor.PointPark)
	if s := ex.sched; s != nil {
		s.Block(executor.PointPark, func() bool { return ex.hasWork() || (ex.closed && ex.live == 0) })
		return
	}
	ex.mu.Lock()
	for !ex.hasWork() && !(ex.closed && ex.live == 0) {
		ex.cond.Wait()
	}
	ex.mu.Unlock()
}

// wake is WAKE, from any goroutine.
func (ex *deepExec) wake(t *deepTask) {
	ex.yield(executor.PointWake)
	w := ex.worker()
	ex.mu.Lock()
	e := traces.Event{Kind: traces.KindWake, Task: t.id, Worker: int32(w)}
	switch t.state {
	case dWaiting:
		t.state = dQueued
		e.Outcome, e.Queue = traces.OutcomeScheduled, ex.push(w, t)
	case dRunning:
		if ex.bug == deepWindowWakeDropped && t.reg && len(ex.global) > 0 && ex.hasLocal() {
			e.Outcome = traces.OutcomeCoalesced // the bug: dropped
			break
		}
		t.state = dNotified
		e.Outcome = traces.OutcomeNotified
	case dQueued, dNotified:
		e.Outcome = traces.OutcomeCoalesced
	case dDone:
		e.Outcome = traces.OutcomeLate
	}
	ex.emit(e)
	ex.cond.Broadcast()
	ex.unlock()
}

// Wait implements executor.Executor.
func (ex *deepExec) Wait() error {
	if s := ex.sched; s != nil {
		s.Block(executor.PointNone, func() bool { return ex.live == 0 })
		return nil
	}
	ex.mu.Lock()
	for ex.live > 0 {
		ex.cond.Wait()
	}
	ex.mu.Unlock()
	return nil
}

// Close implements executor.Executor.
func (ex *deepExec) Close() error {
	if err := closeOnce(&ex.mu, &ex.closed); err != nil {
		return err
	}
	ex.cond.Broadcast() // after closed is set under mu: no waiter misses it
	ex.start()
	n := ex.cfg.Workers
	if s := ex.sched; s != nil {
		s.Block(executor.PointNone, func() bool { return ex.exited == n })
		return nil
	}
	ex.mu.Lock()
	for ex.exited < n {
		ex.cond.Wait()
	}
	ex.mu.Unlock()
	return nil
}

// Wake implements executor.RawWaker.
func (t *deepTask) Wake() { t.ex.wake(t) }

// Clone implements executor.RawWaker.
func (t *deepTask) Clone() executor.RawWaker { return t }

// Register implements executor.Registrar: POLL-PENDING, recorded, then a
// yield point so that a wake can land before the Pending return.
func (t *deepTask) Register(w int) {
	ex := t.ex
	ex.mu.Lock()
	t.reg = true
	ex.emit(traces.Event{Kind: traces.KindRegister, Task: t.id, Worker: int32(w)})
	ex.unlock()
	ex.yield(executor.PointRegister)
}

// deepHandle is a task's Handle.
type deepHandle struct{ t *deepTask }

// Poll is Ready with the task's value once it is DONE; until then it wakes
// the awaiting task at once (it keeps no list of awaiters: a task awaiting
// another polls it again and again).
func (h deepHandle) Poll(cx *executor.Context) (any, bool) {
	ex := h.t.ex
	ex.mu.Lock()
	v, done := h.t.value, h.t.done
	if h.t.err != nil {
		v = h.t.err
	}
	ex.mu.Unlock()
	if !done {
		cx.Waker().Wake()
	}
	return v, done
}

func (h deepHandle) Join() (any, error) {
	ex := h.t.ex
	if s := ex.sched; s != nil {
		s.Block(executor.PointNone, func() bool { return h.t.done })
		return h.t.value, h.t.err
	}
	ex.mu.Lock()
	for !h.t.done {
		ex.cond.Wait()
	}
	ex.mu.Unlock()
	return h.t.value, h.t.err
}
