// Package ctlpool is a small goroutine pool with deliberate bugs, for the
// tests of the pool suite's controlled mode: its source is rewritten for
// the controlled runtime (instrument) as a third-party pool would be.
package ctlpool

import (
	"errors"
	"sync"
	"time"
)

// Pool runs each task on a goroutine of its own, at most Cap at once;
// a submitter beyond the capacity waits on a condition variable. It
// recovers its tasks' panics.
type Pool struct {
	mu      sync.Mutex
	cond    *sync.Cond
	shrunk  *sync.Cond
	cap     int
	running int
	closed  bool
	wg      sync.WaitGroup

	// GrowNoWake: Resize to more wakes no waiting submitter (the shape of
	// ants #205): they wait for a task to end.
	GrowNoWake bool
	// GoexitLeaks: a task that calls runtime.Goexit never gives its slot
	// back (pond #135's shape): later submitters wait for ever.
	GoexitLeaks bool
	// PanicDoubleDone: a task's panic counts the task done twice, a
	// negative WaitGroup counter on a goroutine of the pool: a crash.
	PanicDoubleDone bool
	// ResizeWaits: a shrink waits until the tasks running fit the new
	// capacity, and no task's end wakes it: the controller stays in
	// Resize while the case goes on, and the run ends in a hang.
	ResizeWaits bool
	// Purge, if set, starts with the first Submit a housekeeping goroutine
	// that wakes every Purge (a ticker, as ants' purge of idle workers)
	// until the pool is closed.
	Purge   time.Duration
	purging bool
}

// ErrClosed is returned by Submit after Close.
var ErrClosed = errors.New("ctlpool: closed")

// New returns a pool of capacity n.
func New(n int) *Pool {
	p := &Pool{cap: n}
	p.cond = sync.NewCond(&p.mu)
	p.shrunk = sync.NewCond(&p.mu)
	return p
}

// Submit runs task on a goroutine of its own once the pool has room.
func (p *Pool) Submit(task func()) error {
	p.mu.Lock()
	for !p.closed && p.running >= p.cap {
		p.cond.Wait()
	}
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.running++
	p.wg.Add(1)
	if p.Purge > 0 && !p.purging {
		p.purging = true
		go p.purge()
	}
	p.mu.Unlock()
	go func() {
		returned, panicked := false, false
		defer func() {
			if !returned && !panicked && p.GoexitLeaks {
				p.wg.Done()
				return
			}
			p.mu.Lock()
			p.running--
			p.cond.Signal()
			p.mu.Unlock()
			p.wg.Done()
		}()
		defer func() {
			if r := recover(); r != nil {
				panicked = true
				if p.PanicDoubleDone {
					p.wg.Done()
				}
			}
		}()
		task()
		returned = true
	}()
	return nil
}

// Resize sets the capacity to n.
func (p *Pool) Resize(n int) {
	p.mu.Lock()
	grow := n > p.cap
	p.cap = n
	for p.ResizeWaits && p.running > n {
		p.shrunk.Wait() // nobody signals it
	}
	p.mu.Unlock()
	if grow && !p.GrowNoWake {
		p.cond.Broadcast()
	}
}

// purge is the housekeeping goroutine: it wakes every Purge and leaves
// once the pool is closed.
func (p *Pool) purge() {
	tk := time.NewTicker(p.Purge)
	defer tk.Stop()
	for range tk.C {
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if closed {
			return
		}
	}
}

// Close refuses later submits and waits for the running tasks.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cond.Broadcast()
	p.wg.Wait()
	return nil
}
