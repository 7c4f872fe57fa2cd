package pool

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

var errClosed = errors.New("closed")

// fixed is a correct pool: n workers on an unbounded queue. Close refuses
// new tasks, lets the workers drain the queue and waits for them.
type fixed struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queue  []func()
	closed bool
	wg     sync.WaitGroup

	// Bugs, each off in the correct pool.
	dropEvery      int  // Submit drops every n-th task and returns nil
	runTwiceEvery  int  // a worker runs every n-th task twice
	refuseRunEvery int  // Submit refuses every n-th task, but runs it
	closeNoWait    bool // Close does not wait for the workers
	closeDrops     bool // workers exit at Close without draining the queue
	closeSpins     bool // with closeDrops: Close waits for the queue to empty
	noRespawn      bool // a worker killed by runtime.Goexit is not replaced
	activeCount    bool // Close waits for a count of running tasks that Goexit skips
	active         atomic.Int32
	submitted      atomic.Int64
}

func newFixed(n int, configure func(*fixed)) *fixed {
	p := &fixed{}
	p.cond = sync.NewCond(&p.mu)
	if configure != nil {
		configure(p)
	}
	for range n {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

func (p *fixed) work() {
	defer p.wg.Done()
	taken := 0
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed {
			p.cond.Wait()
		}
		if len(p.queue) == 0 || (p.closed && p.closeDrops) {
			p.mu.Unlock()
			return
		}
		f := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		p.run(f)
		taken++
		if p.runTwiceEvery > 0 && taken%p.runTwiceEvery == 0 {
			p.run(f)
		}
	}
}

// run runs one task. A task that calls runtime.Goexit ends the worker's
// goroutine too; the deferred call starts a replacement worker.
func (p *fixed) run(f func()) {
	returned := false
	defer func() {
		if !returned && !p.noRespawn {
			p.wg.Add(1)
			go p.work()
		}
	}()
	p.active.Add(1)
	f()
	p.active.Add(-1) // not deferred: skipped by Goexit (the activeCount bug)
	returned = true
}

func (p *fixed) Submit(f func()) error {
	n := p.submitted.Add(1)
	if p.dropEvery > 0 && n%int64(p.dropEvery) == 0 {
		return nil
	}
	if p.refuseRunEvery > 0 && n%int64(p.refuseRunEvery) == 0 {
		go f()
		return errClosed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosed
	}
	p.queue = append(p.queue, f)
	p.cond.Signal()
	return nil
}

func (p *fixed) Close() error {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
	if p.closeSpins {
		for {
			p.mu.Lock()
			empty := len(p.queue) == 0
			p.mu.Unlock()
			if empty {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	if p.activeCount {
		for p.active.Load() != 0 {
			time.Sleep(time.Millisecond)
		}
	}
	if !p.closeNoWait {
		p.wg.Wait()
	}
	return nil
}

// goPerTask starts a goroutine per task and ignores its capacity.
type goPerTask struct{ wg sync.WaitGroup }

func (p *goPerTask) Submit(f func()) error {
	p.wg.Add(1)
	go func() { defer p.wg.Done(); f() }()
	return nil
}

func (p *goPerTask) Close() error { p.wg.Wait(); return nil }

// checkThenAct bounds its goroutines with a counter that it checks under a
// lock and increments after releasing it: concurrent Submits can all pass
// the check (the bug ants v2.11.3 had in retrieveWorker). With fixed, the
// increment is under the lock too: the fix.
type checkThenAct struct {
	mu      sync.Mutex
	cap     int32
	fixed   bool
	running atomic.Int32
	wg      sync.WaitGroup
}

func (p *checkThenAct) Submit(f func()) error {
	for {
		p.mu.Lock()
		if p.running.Load() < p.cap {
			if p.fixed {
				p.running.Add(1)
				p.mu.Unlock()
			} else {
				p.mu.Unlock()
				// The window: another Submit can pass the check here (a
				// Gosched stands for a preemption that makes it wide).
				runtime.Gosched()
				p.running.Add(1)
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				f()
				p.running.Add(-1)
			}()
			return nil
		}
		p.mu.Unlock()
		time.Sleep(10 * time.Microsecond)
	}
}

func (p *checkThenAct) Close() error { p.wg.Wait(); return nil }
