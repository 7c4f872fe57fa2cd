package broken

import (
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/executor"
)

// parker puts idle workers to sleep and wakes them when work arrives.
//
// The protocol: a worker that found no work announces itself (sleepers++)
// under the park lock, then looks at the queues once more, and only then
// waits; a pusher pushes first, then signals under the lock if anyone
// announced itself. Either the re-check sees the push, or the pusher sees
// the sleeper and its signal finds it waiting (Wait releases the lock
// atomically). Two of the catalogue's bugs each remove one half of this.
//
// Under a Scheduler the lock is a controlled lock (a Block on "free") and
// the condition variable a count of permits that a Block waits for, so a
// yield point may sit inside the critical section as it does uncontrolled.
type parker struct {
	c        *ctl
	mu       sync.Mutex // uncontrolled
	cond     sync.Cond  // uncontrolled
	held     bool       // controlled lock
	waiters  int        // controlled: goroutines in wait
	permits  int        // controlled: signals not yet taken
	sleepers atomic.Int32
	closing  bool // guarded by the lock
	bug      bug
}

func (p *parker) init(c *ctl, b bug) { p.c, p.cond.L, p.bug = c, &p.mu, b }

func (p *parker) lock() {
	if s := p.c.sched; s != nil {
		s.Block(executor.PointLock, func() bool { return !p.held })
		p.held = true
		return
	}
	p.mu.Lock()
}

func (p *parker) unlock() {
	if p.c.sched != nil {
		p.held = false
		return
	}
	p.mu.Unlock()
}

// wait releases the lock, waits for a signal (or close), and takes the lock
// again, like sync.Cond.Wait.
func (p *parker) wait() {
	s := p.c.sched
	if s == nil {
		p.cond.Wait()
		return
	}
	p.waiters++
	p.held = false
	s.Block(executor.PointPark, func() bool { return p.permits > 0 || p.closing })
	if p.permits > 0 {
		p.permits--
	}
	s.Block(executor.PointLock, func() bool { return !p.held })
	p.held = true
}

// signal wakes one waiting worker, if any.
func (p *parker) signal() {
	if p.c.sched == nil {
		p.cond.Signal()
		return
	}
	if p.waiters > 0 {
		p.waiters--
		p.permits++
	}
}

// park blocks the calling worker until hasWork() or close. It returns false
// when the worker should exit. Called by a worker that just found no work.
func (p *parker) park(hasWork func() bool) bool {
	// An idle worker yields once before it blocks, as real executors spin
	// briefly before parking; the protocol must be right for whatever
	// happens meanwhile.
	p.c.yield(executor.PointPark)
	p.lock()
	defer p.unlock()
	p.sleepers.Add(1)
	defer p.sleepers.Add(-1)
	if p.bug&bugParkNoRecheck == 0 {
		if hasWork() {
			return true
		}
	}
	if p.closing {
		return hasWork()
	}
	// Yield once more between the check and the wait. Harmless when
	// notify takes the lock (it waits for the wait below to release it);
	// with the lost-wake bug, a signal sent without the lock lands here
	// and is lost.
	p.c.yield(executor.PointPark)
	for {
		p.wait()
		if hasWork() {
			return true
		}
		if p.closing {
			return false
		}
	}
}

// notify wakes one sleeping worker, if any. Called by any goroutine after
// it pushed a task; synchronizes with park through the lock.
func (p *parker) notify() {
	if p.sleepers.Load() == 0 {
		return
	}
	if p.bug&bugLostWakeCheckPark != 0 {
		// The bug: signalling without holding the lock, so the signal can
		// come between a sleeper's check and its wait.
		p.signal()
		return
	}
	p.lock()
	p.signal()
	p.unlock()
}

// close wakes every worker for good.
func (p *parker) close() {
	p.lock()
	p.closing = true
	if p.c.sched == nil {
		p.cond.Broadcast()
	}
	p.unlock()
}
