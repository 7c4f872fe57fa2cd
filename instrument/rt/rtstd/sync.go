package rtstd

import (
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/instrument/rt"
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
	h, ok := rt.Holding()
	if !ok {
		m.mu.Lock()
		return
	}
	gen := h.Run()
	h.Block(rt.OpLock, "Mutex.Lock", func() bool { return m.locked != gen })
	m.locked = gen
}

// TryLock is sync.Mutex.TryLock.
func (m *Mutex) TryLock() bool {
	h, ok := rt.Holding()
	if !ok {
		return m.mu.TryLock()
	}
	h.Yield(rt.OpLock)
	if m.locked == h.Run() {
		return false
	}
	m.locked = h.Run()
	return true
}

// Unlock is sync.Mutex.Unlock.
func (m *Mutex) Unlock() {
	h, ok := rt.Holding()
	if !ok {
		m.mu.Unlock()
		return
	}
	if m.locked != h.Run() {
		panic("sync: unlock of unlocked mutex")
	}
	m.locked = 0
	h.Yield(rt.OpUnlock)
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

func (m *RWMutex) own(h rt.Holder) {
	if m.gen != h.Run() {
		m.gen, m.writer, m.readers, m.waiting = h.Run(), false, 0, 0
	}
}

// Lock is sync.RWMutex.Lock.
func (m *RWMutex) Lock() {
	h, ok := rt.Holding()
	if !ok {
		m.mu.Lock()
		return
	}
	m.own(h)
	m.waiting++
	h.Block(rt.OpLock, "RWMutex.Lock", func() bool { return !m.writer && m.readers == 0 })
	m.waiting--
	m.writer = true
}

// TryLock is sync.RWMutex.TryLock.
func (m *RWMutex) TryLock() bool {
	h, ok := rt.Holding()
	if !ok {
		return m.mu.TryLock()
	}
	h.Yield(rt.OpLock)
	m.own(h)
	if m.writer || m.readers > 0 {
		return false
	}
	m.writer = true
	return true
}

// Unlock is sync.RWMutex.Unlock.
func (m *RWMutex) Unlock() {
	h, ok := rt.Holding()
	if !ok {
		m.mu.Unlock()
		return
	}
	m.own(h)
	if !m.writer {
		panic("sync: Unlock of unlocked RWMutex")
	}
	m.writer = false
	h.Yield(rt.OpUnlock)
}

// RLock is sync.RWMutex.RLock.
func (m *RWMutex) RLock() {
	h, ok := rt.Holding()
	if !ok {
		m.mu.RLock()
		return
	}
	m.own(h)
	h.Block(rt.OpRLock, "RWMutex.RLock", func() bool { return !m.writer && m.waiting == 0 })
	m.readers++
}

// TryRLock is sync.RWMutex.TryRLock.
func (m *RWMutex) TryRLock() bool {
	h, ok := rt.Holding()
	if !ok {
		return m.mu.TryRLock()
	}
	h.Yield(rt.OpRLock)
	m.own(h)
	if m.writer || m.waiting > 0 {
		return false
	}
	m.readers++
	return true
}

// RUnlock is sync.RWMutex.RUnlock.
func (m *RWMutex) RUnlock() {
	h, ok := rt.Holding()
	if !ok {
		m.mu.RUnlock()
		return
	}
	m.own(h)
	if m.readers == 0 {
		panic("sync: RUnlock of unlocked RWMutex")
	}
	m.readers--
	h.Yield(rt.OpRUnlock)
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
	h, ok := rt.Holding()
	if !ok {
		w.wg.Add(delta)
		return
	}
	if w.gen != h.Run() {
		w.gen, w.n = h.Run(), 0
	}
	w.n += delta
	if w.n < 0 {
		panic("sync: negative WaitGroup counter")
	}
	if delta < 0 {
		h.Yield(rt.OpSignal)
	}
}

// Done is sync.WaitGroup.Done.
func (w *WaitGroup) Done() { w.Add(-1) }

// Wait is sync.WaitGroup.Wait.
func (w *WaitGroup) Wait() {
	h, ok := rt.Holding()
	if !ok {
		w.wg.Wait()
		return
	}
	if w.gen != h.Run() {
		w.gen, w.n = h.Run(), 0
	}
	h.Block(rt.OpWait, "WaitGroup.Wait", func() bool { return w.n == 0 })
}

// Go is sync.WaitGroup.Go.
func (w *WaitGroup) Go(f func()) {
	w.Add(1)
	rt.Go(func() {
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
	h, ok := rt.Holding()
	if !ok {
		o.once.Do(func() {
			defer o.done.Store(true)
			f()
		})
		return
	}
	h.Yield(rt.OpOnce)
	gen := h.Run()
	for o.running == gen && !o.done.Load() {
		h.Block(rt.OpOnce, "Once.Do", func() bool { return o.done.Load() || o.running != gen })
	}
	if o.done.Load() {
		return
	}
	o.running = gen
	defer func() {
		o.running = 0
		o.done.Store(true)
		h.Quietly(func() { o.once.Do(func() {}) })
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

func (c *Cond) own(h rt.Holder) {
	if c.gen != h.Run() {
		c.gen, c.waiters = h.Run(), nil
	}
}

// Wait is sync.Cond.Wait.
func (c *Cond) Wait() {
	h, ok := rt.Holding()
	if !ok {
		c.realCond().Wait()
		return
	}
	// Go's Wait takes its ticket (an atomic operation) before it
	// unlocks: a yield point, where a Signal can come and go.
	h.Yield(rt.OpWait)
	c.own(h)
	woken := h.Flag()
	c.waiters = append(c.waiters, woken)
	c.L.Unlock()
	h.BlockFlag(rt.OpWait, "Cond.Wait", woken)
	c.L.Lock()
}

// Signal is sync.Cond.Signal.
func (c *Cond) Signal() {
	h, ok := rt.Holding()
	if !ok {
		c.realCond().Signal()
		return
	}
	c.own(h)
	if len(c.waiters) > 0 {
		*c.waiters[0] = true
		c.waiters = c.waiters[1:]
	}
	h.Yield(rt.OpSignal)
}

// Broadcast is sync.Cond.Broadcast.
func (c *Cond) Broadcast() {
	h, ok := rt.Holding()
	if !ok {
		c.realCond().Broadcast()
		return
	}
	c.own(h)
	for _, w := range c.waiters {
		*w = true
	}
	c.waiters = nil
	h.Yield(rt.OpSignal)
}
