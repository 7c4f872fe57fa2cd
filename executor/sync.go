package executor

import (
	"sync"
	"sync/atomic"
)

// This file is the synchronization layer every built-in executor is written
// on. Each primitive has two modes, chosen by whether a Scheduler was set:
//
//   - off (nil Scheduler): plain sync.Mutex, sync.Cond and go statements.
//     The mode switch costs one nil check per yield point.
//   - on: goroutines are started through Scheduler.Go, every yield point
//     calls Scheduler.Yield, and every blocking wait is a Scheduler.Block
//     whose ready function reads the shared state directly (the Scheduler
//     runs ready only while no controlled goroutine runs).
//
// Critical sections never contain a yield point, so under a Scheduler, which
// runs one controlled goroutine at a time, a sync.Mutex is never found held:
// the lock itself needs no controlled version, only the yield before it.

// ctl holds the Scheduler of one executor. The zero ctl is "off".
type ctl struct {
	sched Scheduler
}

// yield is a yield point: under a Scheduler another goroutine may run now.
func (c *ctl) yield(p Point) {
	if c.sched != nil {
		c.sched.Yield(p)
	}
}

// goWorker starts fn on a new goroutine, a controlled one under a Scheduler.
func (c *ctl) goWorker(fn func()) {
	if c.sched != nil {
		c.sched.Go(fn)
		return
	}
	go fn()
}

// block returns once ready() holds. Off, it waits on m and cv, which the
// code that makes ready() true must signal while holding m; on, it is a
// Scheduler.Block. ready must be a value made once (a stored method value or
// closure), so that blocking allocates nothing.
func (c *ctl) block(p Point, m *sync.Mutex, cv *sync.Cond, ready func() bool) {
	if c.sched != nil {
		c.sched.Block(p, ready)
		return
	}
	m.Lock()
	for !ready() {
		cv.Wait()
	}
	m.Unlock()
}

// mutex is a sync.Mutex whose Lock is a yield point (PointLock) under a
// Scheduler. The zero mutex is unlocked.
type mutex struct {
	mu sync.Mutex
}

func (m *mutex) lock(c *ctl) {
	if c.sched != nil {
		c.sched.Yield(PointLock)
	}
	m.mu.Lock()
}

// lockNested takes m while the caller already holds another mutex: no
// yield point, since a yield inside a critical section could hand the turn
// to a goroutine that would then block on the held lock.
func (m *mutex) lockNested() { m.mu.Lock() }

func (m *mutex) unlock() { m.mu.Unlock() }

// lot is where idle workers park. A worker parks only after announcing
// itself idle and then re-checking for work; a producer publishes work and
// then checks for idle workers. Both sides use sequentially consistent
// atomics (nidle, and the queues' size counters), so at least one of them
// sees the other: either the worker finds the work, or the producer finds the
// worker idle and hands it a token. That is the whole lost-wakeup argument;
// the mutex only protects the token count and the condition variable.
//
// Tokens, not a bare Signal, because the producer may signal before the
// worker reaches cond.Wait: the token stays until a worker consumes it.
type lot struct {
	mu     sync.Mutex
	cond   sync.Cond
	idle   int // parked or about to park; guarded by mu
	tokens int // unparks not yet consumed; guarded by mu
	nidle  atomic.Int32
	stop   atomic.Bool
	// woken is what a parked worker waits for under a Scheduler (which
	// calls it only while no controlled goroutine runs): a token, or the
	// stop. Made once, so that parking allocates nothing.
	woken func() bool
}

func (l *lot) init() {
	l.cond.L = &l.mu
	l.woken = func() bool { return l.tokens > 0 || l.stop.Load() }
}

// setIdle counts a worker that becomes idle (+1) or stops being idle
// (-1). Called with mu held.
func (l *lot) setIdle(d int) {
	l.idle += d
	l.nidle.Store(int32(l.idle))
}

// notify unparks one idle worker, if there is one. Any goroutine may call
// it, after publishing the work that the worker should find. It costs one
// atomic load when no worker is idle.
func (l *lot) notify() {
	if l.nidle.Load() == 0 {
		return
	}
	l.mu.Lock()
	if l.tokens < l.idle {
		l.tokens++
		l.cond.Signal()
	}
	l.mu.Unlock()
}

// shutdown unparks every worker for good.
func (l *lot) shutdown() {
	l.stop.Store(true)
	l.mu.Lock()
	l.cond.Broadcast()
	l.mu.Unlock()
}

// group counts running goroutines and waits for them to end.
type group struct {
	wg      sync.WaitGroup
	running atomic.Int32
	zero    func() bool
}

func (g *group) init() { g.zero = func() bool { return g.running.Load() == 0 } }

func (g *group) add() { g.running.Add(1); g.wg.Add(1) }

func (g *group) done() { g.running.Add(-1); g.wg.Done() }

func (g *group) wait(c *ctl) {
	if c.sched != nil {
		c.sched.Block(PointNone, g.zero)
		return
	}
	g.wg.Wait()
}
