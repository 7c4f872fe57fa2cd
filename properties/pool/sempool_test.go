package pool

import (
	"context"
	"errors"
	"sync"
	"time"
)

// semPool is a correct pool with every ability: a goroutine per task,
// gated by a FIFO weighted semaphore of resizable capacity; tasks may
// return errors (collected per round, ErrorsAll) and panic (recovered);
// Wait makes it reusable; Cancel refuses the waiting and later submits.
// Each bug is a field, off in the correct pool; each is the shape of a
// published bug (named where there is one).
type semPool struct {
	mu       sync.Mutex
	capacity int
	used     int
	waiters  []*semWaiter
	wg       sync.WaitGroup
	closed   bool
	canceled bool
	errs     []error
	panics   []any

	// Bugs.
	resizeNoWake   bool // a grow does not wake blocked submitters (ants #205)
	shrinkIgnored  bool // a shrink does not lower the capacity
	growExtra      bool // a grow makes room for one task more than asked
	weightIgnored  bool // every task counts as weight 1
	cancelNoNotify bool // a cancelled head waiter does not wake those behind (x/sync #37852)
	panicLeaks     bool // a panicking task's slot comes back only after a 300ms purge
	goexitLeaks    bool // a Goexit-ing task's slot never comes back
	cancelLeaks    bool // a submit refused by Cancel is never subtracted from Close's count
	reusePanics    bool // Submit after Wait panics (conc #103)
	closePanics    bool // Submit after Close panics (a send on the closed queue)
	doneAccepted   bool // an acquire with a done context succeeds when there is room (x/sync before v0.7.0)
	errsKept       bool // Wait does not reset the errors (conc #128)
	errsDropped    bool // Wait and Close return nil
	propagate      bool // Wait and Close re-panic with a task's panic (conc's policy)
	dropNth        int  // the dropNth task submitted (counting from 1) is accepted and never run
	waited         bool
	submitted      int
}

type semWaiter struct {
	weight int
	ready  chan struct{} // closed when granted
	refuse bool          // set, with ready closed, when refused
}

var errCanceled = errors.New("pool canceled")

func newSemPool(capacity int, configure func(*semPool)) *semPool {
	p := &semPool{capacity: capacity}
	if configure != nil {
		configure(p)
	}
	return p
}

// notify grants the head waiters that fit, in order. Called with mu held.
func (p *semPool) notify() {
	for len(p.waiters) > 0 {
		w := p.waiters[0]
		if p.capacity-p.used < w.weight {
			return
		}
		p.used += w.weight
		p.waiters = p.waiters[1:]
		close(w.ready)
	}
}

func (p *semPool) acquire(ctx context.Context, weight int) error {
	if ctx.Err() != nil && !p.doneAccepted {
		return ctx.Err()
	}
	p.mu.Lock()
	if p.closed || p.canceled {
		p.mu.Unlock()
		return errClosed
	}
	if len(p.waiters) == 0 && p.capacity-p.used >= weight {
		p.used += weight
		p.mu.Unlock()
		return nil
	}
	w := &semWaiter{weight: weight, ready: make(chan struct{})}
	p.waiters = append(p.waiters, w)
	p.mu.Unlock()
	select {
	case <-w.ready:
		if w.refuse {
			return errCanceled
		}
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		defer p.mu.Unlock()
		select {
		case <-w.ready:
			if w.refuse {
				return errCanceled
			}
			return nil // granted meanwhile: keep it
		default:
		}
		i := 0
		for i < len(p.waiters) && p.waiters[i] != w {
			i++
		}
		head := i == 0
		p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
		if head && !p.cancelNoNotify {
			p.notify()
		}
		return ctx.Err()
	}
}

// send stands for the send on a channel that Wait closed.
func (p *semPool) send() {
	panic("send on closed channel")
}

func (p *semPool) release(weight int) {
	p.mu.Lock()
	p.used -= weight
	p.notify()
	p.mu.Unlock()
}

func (p *semPool) SubmitWeighted(ctx context.Context, weight int, task func()) error {
	return p.submit(ctx, weight, func() error { task(); return nil })
}

func (p *semPool) submit(ctx context.Context, weight int, task func() error) error {
	if p.weightIgnored {
		weight = 1
	}
	p.mu.Lock()
	reused := p.reusePanics && p.waited
	if p.closed && p.closePanics {
		p.mu.Unlock()
		panic("send on closed channel")
	}
	if p.closed && !reused {
		p.mu.Unlock()
		return errClosed
	}
	p.submitted++
	if p.dropNth > 0 && p.submitted == p.dropNth {
		p.mu.Unlock()
		return nil
	}
	if !reused {
		// Under mu, so that no Add runs concurrently with Close's Wait:
		// Close sets closed under mu before it waits.
		p.wg.Add(1)
	}
	p.mu.Unlock()
	if reused {
		p.send()
	}
	if err := p.acquire(ctx, weight); err != nil {
		if !(p.cancelLeaks && errors.Is(err, errCanceled)) {
			p.wg.Done()
		}
		return err
	}
	go p.run(weight, task)
	return nil
}

func (p *semPool) run(weight int, task func() error) {
	defer p.wg.Done()
	returned := false
	defer func() {
		r := recover()
		switch {
		case r != nil:
			p.mu.Lock()
			p.panics = append(p.panics, r)
			p.mu.Unlock()
			if p.panicLeaks {
				time.AfterFunc(300*time.Millisecond, func() { p.release(weight) })
				return
			}
		case !returned && p.goexitLeaks:
			return
		}
		p.release(weight)
	}()
	err := task()
	returned = true
	if err != nil {
		p.mu.Lock()
		p.errs = append(p.errs, err)
		p.mu.Unlock()
	}
}

func (p *semPool) Submit(task func()) error {
	return p.SubmitWeighted(context.Background(), 1, task)
}

func (p *semPool) SubmitErr(task func() error) error {
	return p.submit(context.Background(), 1, task)
}

func (p *semPool) Resize(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n < p.capacity && p.shrinkIgnored {
		return
	}
	if n > p.capacity && p.growExtra {
		n++
	}
	p.capacity = n
	if !p.resizeNoWake {
		p.notify()
	}
}

// result returns the round's errors and resets them, and re-panics with a
// task's panic when the pool propagates them.
func (p *semPool) result() error {
	p.mu.Lock()
	errs := p.errs
	if !p.errsKept {
		p.errs = nil
	}
	panics := p.panics
	p.panics = nil
	p.mu.Unlock()
	if p.propagate && len(panics) > 0 {
		panic(panics[0])
	}
	if p.errsDropped {
		return nil
	}
	return errors.Join(errs...)
}

func (p *semPool) Wait() error {
	p.wg.Wait()
	p.mu.Lock()
	p.waited = true
	p.mu.Unlock()
	return p.result()
}

func (p *semPool) refuseAll() {
	for _, w := range p.waiters {
		w.refuse = true
		close(w.ready)
	}
	p.waiters = nil
}

func (p *semPool) Cancel() {
	p.mu.Lock()
	p.canceled = true
	p.refuseAll()
	p.mu.Unlock()
}

func (p *semPool) Close() error {
	p.mu.Lock()
	p.closed = true
	p.refuseAll()
	p.mu.Unlock()
	p.wg.Wait()
	return p.result()
}

// semAdapter exposes only some abilities of a semPool, through Adapter.
func semAdapter(p *semPool, abilities ...string) *Adapter {
	a := &Adapter{SubmitFunc: p.Submit, CloseFunc: p.Close}
	for _, ab := range abilities {
		switch ab {
		case "resize":
			a.ResizeFunc = p.Resize
		case "context":
			a.SubmitContextFunc = func(ctx context.Context, f func()) error { return p.SubmitWeighted(ctx, 1, f) }
		case "weighted":
			a.SubmitWeightedFunc = p.SubmitWeighted
		case "errors":
			a.SubmitErrFunc = p.SubmitErr
		case "wait":
			a.WaitFunc = p.Wait
		case "cancel":
			a.CancelFunc = p.Cancel
		}
	}
	return a
}
