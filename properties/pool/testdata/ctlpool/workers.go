package ctlpool

import (
	"sync"
	"sync/atomic"
	"time"
)

// Workers keeps up to Cap worker goroutines, as ants does: a submitter
// hands its task to an idle worker (the last to come back), starts a new
// worker while there are fewer than Cap, or waits on a condition
// variable; a worker that ends its task goes back to the idle list and
// signals. A purge, every Expiry, stops the workers idle for Expiry or
// longer (it sends them nil) and, if submitters are waiting, broadcasts:
// a lost wakeup is then a delay of up to Expiry, not a hang.
type Workers struct {
	mu      sync.Mutex
	cond    *sync.Cond
	cap     int
	workers atomic.Int32 // started and not ended, idle or busy
	idle    []*worker    // under mu
	waiting int          // under mu
	closed  bool
	wg      sync.WaitGroup // tasks accepted and not finished
	expiry  time.Duration
	stop    chan struct{}

	// ExpiryNoWake: a worker the purge stops ends signalling without
	// the pool's lock (ants' shape), so a submitter between its check
	// (no idle worker, Cap workers) and its wait misses it.
	ExpiryNoWake bool
	// EndNoWake: a worker back from its task does not signal: a waiting
	// submitter waits for the next purge.
	EndNoWake bool
}

type worker struct {
	task chan func()
	last time.Time // when it came back idle (under mu)
}

// NewWorkers returns a pool of at most n workers whose idle workers are
// stopped after expiry.
func NewWorkers(n int, expiry time.Duration) *Workers {
	p := &Workers{cap: n, expiry: expiry, stop: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	go p.purge()
	return p
}

// Submit hands task to a worker, waiting while Cap are busy.
func (p *Workers) Submit(task func()) error {
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			return ErrClosed
		}
		if n := len(p.idle); n > 0 {
			w := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.wg.Add(1)
			p.mu.Unlock()
			w.task <- task
			return nil
		}
		if int(p.workers.Load()) < p.cap {
			p.workers.Add(1)
			p.wg.Add(1)
			p.mu.Unlock()
			w := &worker{task: make(chan func(), 1)}
			w.task <- task
			go p.run(w)
			return nil
		}
		p.waiting++
		p.cond.Wait()
		p.waiting--
	}
}

func (p *Workers) run(w *worker) {
	for f := range w.task {
		if f == nil {
			break
		}
		p.do(f)
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			break
		}
		w.last = time.Now()
		p.idle = append(p.idle, w)
		if !p.EndNoWake {
			p.cond.Signal()
		}
		p.mu.Unlock()
	}
	if p.ExpiryNoWake {
		p.workers.Add(-1)
		p.cond.Signal()
		return
	}
	p.mu.Lock()
	p.workers.Add(-1)
	p.cond.Signal()
	p.mu.Unlock()
}

func (p *Workers) do(f func()) {
	defer p.wg.Done()
	defer func() { _ = recover() }()
	f()
}

// purge stops the workers idle for expiry or longer, every expiry, until
// the pool is closed.
func (p *Workers) purge() {
	tk := time.NewTicker(p.expiry)
	defer tk.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tk.C:
		}
		p.mu.Lock()
		var stale []*worker
		now := time.Now()
		keep := p.idle[:0]
		for _, w := range p.idle {
			if now.Sub(w.last) >= p.expiry {
				stale = append(stale, w)
			} else {
				keep = append(keep, w)
			}
		}
		p.idle = keep
		waiting := p.waiting > 0
		p.mu.Unlock()
		for _, w := range stale {
			w.task <- nil
		}
		if waiting {
			p.cond.Broadcast()
		}
	}
}

// Close refuses later submits, waits for the accepted tasks and stops
// the workers and the purge.
func (p *Workers) Close() error {
	p.wg.Wait()
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	p.cond.Broadcast()
	for _, w := range idle {
		w.task <- nil
	}
	close(p.stop)
	return nil
}
