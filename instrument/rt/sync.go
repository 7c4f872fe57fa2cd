package rt

import (
	"sync"
	"sync/atomic"
)

// The sync types below replace those of package sync in instrumented
// code. Called by the controlled goroutine holding control they are yield
// points of the scheduler, and their state belongs to the current run (a
// value left locked by a stopped run is unlocked for the next); called by
// any other goroutine they are the real sync types. The two are not
// synchronized with each other: a value shared between controlled and
// uncontrolled goroutines during a run is not protected.

// Mutex is sync.Mutex.
type Mutex struct {
	mu     sync.Mutex
	locked uint64 // the run that holds it
}

// Lock is sync.Mutex.Lock.
func (m *Mutex) Lock() {
	r, g := current()
	if g == nil {
		m.mu.Lock()
		return
	}
	r.block(g, opLock, wait{op: "Mutex.Lock", ready: func() bool { return m.locked != r.gen }})
	m.locked = r.gen
}

// TryLock is sync.Mutex.TryLock.
func (m *Mutex) TryLock() bool {
	r, g := current()
	if g == nil {
		return m.mu.TryLock()
	}
	r.yield(g, opLock)
	if m.locked == r.gen {
		return false
	}
	m.locked = r.gen
	return true
}

// Unlock is sync.Mutex.Unlock.
func (m *Mutex) Unlock() {
	r, g := current()
	if g == nil {
		m.mu.Unlock()
		return
	}
	if m.locked != r.gen {
		panic("sync: unlock of unlocked mutex")
	}
	m.locked = 0
	r.yield(g, opUnlock)
}

// RWMutex is sync.RWMutex: a writer waiting in Lock keeps new readers out,
// as in Go.
type RWMutex struct {
	mu      sync.RWMutex
	gen     uint64 // the run the fields below belong to
	writer  bool
	readers int
	waiting int // writers waiting in Lock
}

func (m *RWMutex) own(r *run) {
	if m.gen != r.gen {
		m.gen, m.writer, m.readers, m.waiting = r.gen, false, 0, 0
	}
}

// Lock is sync.RWMutex.Lock.
func (m *RWMutex) Lock() {
	r, g := current()
	if g == nil {
		m.mu.Lock()
		return
	}
	m.own(r)
	m.waiting++
	r.block(g, opLock, wait{op: "RWMutex.Lock", ready: func() bool { return !m.writer && m.readers == 0 }})
	m.waiting--
	m.writer = true
}

// TryLock is sync.RWMutex.TryLock.
func (m *RWMutex) TryLock() bool {
	r, g := current()
	if g == nil {
		return m.mu.TryLock()
	}
	r.yield(g, opLock)
	m.own(r)
	if m.writer || m.readers > 0 {
		return false
	}
	m.writer = true
	return true
}

// Unlock is sync.RWMutex.Unlock.
func (m *RWMutex) Unlock() {
	r, g := current()
	if g == nil {
		m.mu.Unlock()
		return
	}
	m.own(r)
	if !m.writer {
		panic("sync: Unlock of unlocked RWMutex")
	}
	m.writer = false
	r.yield(g, opUnlock)
}

// RLock is sync.RWMutex.RLock.
func (m *RWMutex) RLock() {
	r, g := current()
	if g == nil {
		m.mu.RLock()
		return
	}
	m.own(r)
	r.block(g, opRLock, wait{op: "RWMutex.RLock", ready: func() bool { return !m.writer && m.waiting == 0 }})
	m.readers++
}

// TryRLock is sync.RWMutex.TryRLock.
func (m *RWMutex) TryRLock() bool {
	r, g := current()
	if g == nil {
		return m.mu.TryRLock()
	}
	r.yield(g, opRLock)
	m.own(r)
	if m.writer || m.waiting > 0 {
		return false
	}
	m.readers++
	return true
}

// RUnlock is sync.RWMutex.RUnlock.
func (m *RWMutex) RUnlock() {
	r, g := current()
	if g == nil {
		m.mu.RUnlock()
		return
	}
	m.own(r)
	if m.readers == 0 {
		panic("sync: RUnlock of unlocked RWMutex")
	}
	m.readers--
	r.yield(g, opRUnlock)
}

// RLocker is sync.RWMutex.RLocker.
func (m *RWMutex) RLocker() sync.Locker { return rlocker{m} }

type rlocker struct{ m *RWMutex }

func (l rlocker) Lock()   { l.m.RLock() }
func (l rlocker) Unlock() { l.m.RUnlock() }

// WaitGroup is sync.WaitGroup.
type WaitGroup struct {
	wg  sync.WaitGroup
	gen uint64
	n   int
}

// Add is sync.WaitGroup.Add.
func (w *WaitGroup) Add(delta int) {
	r, g := current()
	if g == nil {
		w.wg.Add(delta)
		return
	}
	if w.gen != r.gen {
		w.gen, w.n = r.gen, 0
	}
	w.n += delta
	if w.n < 0 {
		panic("sync: negative WaitGroup counter")
	}
	if delta < 0 {
		r.yield(g, opSignal)
	}
}

// Done is sync.WaitGroup.Done.
func (w *WaitGroup) Done() { w.Add(-1) }

// Wait is sync.WaitGroup.Wait.
func (w *WaitGroup) Wait() {
	r, g := current()
	if g == nil {
		w.wg.Wait()
		return
	}
	if w.gen != r.gen {
		w.gen, w.n = r.gen, 0
	}
	r.block(g, opWait, wait{op: "WaitGroup.Wait", ready: func() bool { return w.n == 0 }})
}

// Go is sync.WaitGroup.Go.
func (w *WaitGroup) Go(f func()) {
	w.Add(1)
	Go(func() {
		defer w.Done()
		f()
	})
}

// Once is sync.Once. Unlike the other types, a Once done in one run stays
// done, as it does in a process.
type Once struct {
	once    sync.Once
	done    atomic.Bool
	running uint64 // the run in which f is running
}

// Do is sync.Once.Do.
func (o *Once) Do(f func()) {
	r, g := current()
	if g == nil {
		o.once.Do(func() {
			defer o.done.Store(true)
			f()
		})
		return
	}
	r.yield(g, opOnce)
	for o.running == r.gen && !o.done.Load() {
		r.block(g, opOnce, wait{op: "Once.Do", ready: func() bool { return o.done.Load() || o.running != r.gen }})
	}
	if o.done.Load() {
		return
	}
	o.running = r.gen
	defer func() {
		o.running = 0
		o.done.Store(true)
		r.quietly(func() { o.once.Do(func() {}) })
	}()
	f()
}

// Cond is sync.Cond.
type Cond struct {
	L sync.Locker

	real    *sync.Cond
	initial sync.Once
	gen     uint64
	waiters []*bool
}

// NewCond is sync.NewCond.
func NewCond(l sync.Locker) *Cond { return &Cond{L: l} }

func (c *Cond) realCond() *sync.Cond {
	c.initial.Do(func() { c.real = sync.NewCond(c.L) })
	return c.real
}

func (c *Cond) own(r *run) {
	if c.gen != r.gen {
		c.gen, c.waiters = r.gen, nil
	}
}

// Wait is sync.Cond.Wait.
func (c *Cond) Wait() {
	r, g := current()
	if g == nil {
		c.realCond().Wait()
		return
	}
	// Go's Wait takes its ticket (an atomic operation) before it
	// unlocks: a yield point, where a Signal can come and go.
	r.yield(g, opWait)
	c.own(r)
	g.condWoken = false
	c.waiters = append(c.waiters, &g.condWoken)
	c.L.Unlock()
	r.block(g, opWait, wait{op: "Cond.Wait", woken: &g.condWoken})
	c.L.Lock()
}

// Signal is sync.Cond.Signal.
func (c *Cond) Signal() {
	r, g := current()
	if g == nil {
		c.realCond().Signal()
		return
	}
	c.own(r)
	if len(c.waiters) > 0 {
		*c.waiters[0] = true
		c.waiters = c.waiters[1:]
	}
	r.yield(g, opSignal)
}

// Broadcast is sync.Cond.Broadcast.
func (c *Cond) Broadcast() {
	r, g := current()
	if g == nil {
		c.realCond().Broadcast()
		return
	}
	c.own(r)
	for _, w := range c.waiters {
		*w = true
	}
	c.waiters = nil
	r.yield(g, opSignal)
}
