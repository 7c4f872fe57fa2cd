package stress

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Pinning says where a function ran: on CPU, pinned, or unpinned and why.
type Pinning struct {
	CPU    int
	Pinned bool
	Reason string // why it could not be pinned; empty when Pinned
}

func (p Pinning) String() string {
	if p.Pinned {
		return fmt.Sprintf("pinned to CPU %d", p.CPU)
	}
	return fmt.Sprintf("not pinned to CPU %d: %s", p.CPU, p.Reason)
}

// Thread is a function running on its own OS thread, started by Go. Wait
// may be called by any goroutine, any number of times, and synchronizes
// with the function's return. The zero Thread is not usable.
type Thread struct {
	done   chan struct{}
	pin    Pinning
	panicV any
	panics bool
}

// Go starts fn on a new goroutine locked to a new OS thread pinned to cpu.
// If the thread cannot be pinned, fn runs unpinned and Wait's Pinning says
// why. The thread is never unlocked: when fn returns, the goroutine exits
// locked and the Go runtime ends the thread, so the affinity never leaks to
// other goroutines.
func Go(cpu int, fn func()) *Thread {
	t := &Thread{done: make(chan struct{}), pin: Pinning{CPU: cpu}}
	go func() {
		defer close(t.done)
		defer func() {
			if r := recover(); r != nil {
				t.panicV, t.panics = r, true
			}
		}()
		runtime.LockOSThread()
		if err := pinThread(cpu); err != nil {
			t.pin.Reason = err.Error()
		} else {
			t.pin.Pinned = true
		}
		fn()
	}()
	return t
}

// Wait waits for the function to return and says how it was pinned. If the
// function panicked, Wait panics with the same value on the caller's
// goroutine.
func (t *Thread) Wait() Pinning {
	<-t.done // closed after the function returned and t was written
	if t.panics {
		panic(t.panicV)
	}
	return t.pin
}

// OnCPU runs fn on an OS thread pinned to cpu (see Go) and waits for it.
func OnCPU(cpu int, fn func()) Pinning { return Go(cpu, fn).Wait() }

// Together runs fns[i] on a thread pinned to cpus[i % len(cpus)] (see Go);
// all wait at a Barrier before they start, giving up after limit. It waits
// for every function and returns how each was pinned, and whether they all
// met at the barrier (if not, the functions still ran, but not together).
// With no cpus, the threads are not pinned.
func Together(cpus []int, limit time.Duration, fns ...func()) (pins []Pinning, met bool) {
	b := NewBarrier(len(fns), limit)
	threads := make([]*Thread, len(fns))
	var mu sync.Mutex
	met = true
	for i, fn := range fns {
		start := func() {
			if !b.Wait() {
				mu.Lock()
				met = false
				mu.Unlock()
			}
			fn()
		}
		if len(cpus) == 0 {
			threads[i] = Go(-1, start)
		} else {
			threads[i] = Go(cpus[i%len(cpus)], start)
		}
	}
	pins = make([]Pinning, len(fns))
	for i, t := range threads {
		pins[i] = t.Wait()
	}
	return pins, met
}
