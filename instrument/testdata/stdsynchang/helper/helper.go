// Package helper is not instrumented: the goroutine Contend starts is not
// controlled, and the lock it waits for is the standard library's.
package helper

import "sync"

// Shared is a count under a lock of the standard library's sync.
type Shared struct {
	mu sync.Mutex
	n  int
}

// Lock, Unlock and Add are called by the test's controlled goroutines
// (with the overlay, Lock and Unlock are yield points).
func (s *Shared) Lock()     { s.mu.Lock() }
func (s *Shared) Unlock()   { s.mu.Unlock() }
func (s *Shared) Add(k int) { s.n += k }

// N returns the count.
func (s *Shared) N() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Contend starts a goroutine of its own (uncontrolled) that takes the
// lock, adds one and lets go; done is closed after.
func (s *Shared) Contend() (done <-chan struct{}) {
	c := make(chan struct{})
	go func() {
		s.mu.Lock()
		s.n++
		s.mu.Unlock()
		close(c)
	}()
	return c
}

// RW is a count under an RWMutex of the standard library's sync.
type RW struct {
	rw sync.RWMutex
	n  int
}

func (x *RW) Lock()     { x.rw.Lock() }
func (x *RW) Unlock()   { x.rw.Unlock() }
func (x *RW) RLock()    { x.rw.RLock() }
func (x *RW) RUnlock()  { x.rw.RUnlock() }
func (x *RW) Add(k int) { x.n += k }
func (x *RW) N() int    { return x.n }

// Contend starts a goroutine of its own that adds one as a writer (it
// waits for the readers) and then reads as a reader (it waits for a
// writer).
func (x *RW) Contend() (done <-chan struct{}) {
	c := make(chan struct{})
	go func() {
		x.rw.Lock()
		x.n++
		x.rw.Unlock()
		x.rw.RLock()
		_ = x.n
		x.rw.RUnlock()
		close(c)
	}()
	return c
}
