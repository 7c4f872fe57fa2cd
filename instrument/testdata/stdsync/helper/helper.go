// Package helper is not instrumented: what its callers contend on is the
// standard library's sync.
package helper

import (
	"sync"
	"time"
)

// Counter's Incr reads and writes under two lock sections: two Incr at once
// can lose an update, at the lock points only.
type Counter struct {
	mu sync.Mutex
	n  int
}

func (c *Counter) Incr() {
	c.mu.Lock()
	v := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = v + 1
	c.mu.Unlock()
}

func (c *Counter) N() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Accounts deadlocks when AB and BA run at once (lock order inversion).
type Accounts struct{ a, b sync.Mutex }

func (x *Accounts) AB() { x.a.Lock(); x.b.Lock(); x.b.Unlock(); x.a.Unlock() }
func (x *Accounts) BA() { x.b.Lock(); x.a.Lock(); x.a.Unlock(); x.b.Unlock() }

// Pipeline uses WaitGroup.Go, a Cond-based queue, an RWMutex and
// sync.OnceValue: correct under every schedule; it returns 1+2+...+n
// doubled.
func Pipeline(n int) int {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	var queue []int
	closed := false
	var rw sync.RWMutex
	factor := 0
	two := sync.OnceValue(func() int { return 2 })
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; i <= n; i++ {
			mu.Lock()
			queue = append(queue, i)
			cond.Signal()
			mu.Unlock()
		}
		mu.Lock()
		closed = true
		cond.Broadcast()
		mu.Unlock()
	})
	wg.Go(func() {
		rw.Lock()
		factor = two()
		rw.Unlock()
	})
	sum := 0
	wg.Go(func() {
		for {
			mu.Lock()
			for len(queue) == 0 && !closed {
				cond.Wait()
			}
			if len(queue) == 0 {
				mu.Unlock()
				return
			}
			v := queue[0]
			queue = queue[1:]
			mu.Unlock()
			rw.RLock()
			f := factor
			rw.RUnlock()
			_ = f
			sum += v * two()
		}
	})
	wg.Wait()
	return sum
}

// Held is a lock that Hold keeps for a while on a goroutine of its own
// (not controlled: this package is not instrumented).
type Held struct{ mu sync.Mutex }

// Hold takes the lock on a new goroutine, which sleeps d and lets go.
func (h *Held) Hold(d time.Duration) {
	locked := make(chan bool)
	go func() {
		h.mu.Lock()
		locked <- true
		time.Sleep(d)
		h.mu.Unlock()
	}()
	<-locked
}

// Touch waits for the lock.
func (h *Held) Touch() {
	h.mu.Lock()
	h.mu.Unlock()
}
