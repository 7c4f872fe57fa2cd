package broken

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parker puts idle workers to sleep and wakes them when work arrives.
//
// The protocol: a worker that found no work announces itself (sleepers++)
// under mu, then looks at the queues once more, and only then waits; a
// pusher pushes first, then signals under mu if anyone announced itself.
// Either the re-check sees the push, or the pusher sees the sleeper and its
// signal finds it waiting (Wait releases mu atomically). Two of the
// catalogue's bugs each remove one half of this.
type parker struct {
	mu       sync.Mutex
	cond     sync.Cond
	sleepers atomic.Int32
	closing  bool // guarded by mu
	bug      bug
}

func (p *parker) init(b bug) { p.cond.L = &p.mu; p.bug = b }

// park blocks the calling worker until hasWork() or close. It returns false
// when the worker should exit. Called by a worker that just found no work.
func (p *parker) park(hasWork func() bool) bool {
	// An idle worker yields once before it blocks, as real executors spin
	// briefly before parking; the protocol must be right for whatever
	// happens meanwhile.
	runtime.Gosched()
	p.mu.Lock()
	defer p.mu.Unlock()
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
	// notify holds mu (it waits for the Wait below to release it); with
	// the lost-wake bug, a signal sent without mu lands here and is lost.
	runtime.Gosched()
	for {
		p.cond.Wait()
		if hasWork() {
			return true
		}
		if p.closing {
			return false
		}
	}
}

// notify wakes one sleeping worker, if any. Called by any goroutine after
// it pushed a task; synchronizes with park through mu.
func (p *parker) notify() {
	if p.sleepers.Load() == 0 {
		return
	}
	if p.bug&bugLostWakeCheckPark != 0 {
		// The bug: signalling without holding mu, so the signal can come
		// between a sleeper's check and its wait.
		p.cond.Signal()
		return
	}
	p.mu.Lock()
	p.cond.Signal()
	p.mu.Unlock()
}

// close wakes every worker for good.
func (p *parker) close() {
	p.mu.Lock()
	p.closing = true
	p.cond.Broadcast()
	p.mu.Unlock()
}
