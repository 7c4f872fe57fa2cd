package control

import (
	"github.com/execspec/execspec/executor"
)

// This file holds tiny executor-shaped programs written against the
// Scheduler hook, so that the Controller is tested without any executor.

// mutex is a lock under control: Lock blocks until the lock is free.
type mutex struct {
	s    executor.Scheduler
	held bool
	free func() bool // made once: a closure per Lock would allocate
}

func (m *mutex) Lock() {
	if m.free == nil {
		m.free = func() bool { return !m.held }
	}
	m.s.Block(executor.PointLock, m.free)
	m.held = true
}

func (m *mutex) Unlock() { m.held = false }

// cond is a condition variable under control. Waiters record the
// generation before they release the lock; a broadcast bumps it.
// lossy makes Wait read the generation after releasing the lock: a
// broadcast in between is then lost (the classic lost wakeup).
type cond struct {
	s     executor.Scheduler
	gen   int
	lossy bool
}

func (c *cond) Wait(m *mutex) {
	g := c.gen
	m.Unlock()
	if c.lossy {
		c.s.Yield(executor.PointPark)
		g = c.gen
	}
	c.s.Block(executor.PointPark, func() bool { return c.gen != g })
	m.Lock()
}

func (c *cond) Broadcast() { c.gen++ }

// miniPool is a pool of workers on one queue of func() tasks, with a
// mutex and a condition variable: the shape of an executor.
type miniPool struct {
	s       executor.Scheduler
	mu      mutex
	cv      cond
	queue   []func()
	closed  bool
	exited  int
	workers int
}

func newMiniPool(s executor.Scheduler, workers int, lossy bool) *miniPool {
	p := &miniPool{s: s, mu: mutex{s: s}, cv: cond{s: s, lossy: lossy}, workers: workers}
	for w := range workers {
		s.Go(func() { p.work(w) })
	}
	return p
}

func (p *miniPool) work(w int) {
	for {
		p.s.Yield(executor.PointPop)
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed {
			p.cv.Wait(&p.mu)
		}
		if len(p.queue) == 0 {
			p.exited++
			p.mu.Unlock()
			return
		}
		f := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		p.s.Yield(executor.PointPoll)
		f()
	}
}

func (p *miniPool) Submit(f func()) {
	p.s.Yield(executor.PointPush)
	p.mu.Lock()
	p.queue = append(p.queue, f)
	p.cv.Broadcast()
	p.mu.Unlock()
}

// Close lets the workers drain the queue and waits for them to exit.
func (p *miniPool) Close() {
	p.mu.Lock()
	p.closed = true
	p.cv.Broadcast()
	p.mu.Unlock()
	p.s.Block(executor.PointPark, func() bool { return p.exited == p.workers })
}

// poolProgram runs tasks tasks on a miniPool and returns the program and a
// pointer to the number of tasks that ran.
func poolProgram(c *Controller, workers, tasks int, lossy bool) (func(), *int) {
	ran := new(int)
	return func() {
		p := newMiniPool(c, workers, lossy)
		for i := range tasks {
			p.Submit(func() {
				c.Note(uint64(i))
				*ran++
			})
		}
		p.Close()
	}, ran
}

// lostUpdate is two goroutines that each increment x with a read, a yield
// and a write: x ends at 1 when both read before either writes.
func lostUpdate(c *Controller, x *int, locked bool) func() {
	var m mutex
	m.s = c
	return func() {
		for range 2 {
			c.Go(func() {
				if locked {
					m.Lock()
				}
				v := *x
				c.Yield(executor.PointNone)
				*x = v + 1
				if locked {
					m.Unlock()
				}
			})
		}
	}
}

// checkThenAct is a lazy initialisation race: each goroutine checks that
// the value is unset, yields, and sets it; both may set it.
func checkThenAct(c *Controller, sets *int) func() {
	set := false
	return func() {
		for range 3 {
			c.Go(func() {
				c.Yield(executor.PointNone)
				if !set {
					c.Yield(executor.PointNone)
					set = true
					*sets++
				}
			})
		}
	}
}
