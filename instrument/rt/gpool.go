package rt

import (
	"sync/atomic"

	"github.com/execspec/execspec/internal/goid"
)

// Reuse of goroutines. Each controlled goroutine runs on a worker, a
// runtime goroutine of the bubble. A worker whose controlled goroutine's
// function returned (not by a panic, nor runtime.Goexit, nor unwound
// because the run was stopped) goes on the bubble's free list and runs
// the next controlled goroutine that a run of the same bubble starts
// (Go, a run's goroutine 0), with its stack already grown and its
// channel already made: a fresh goroutine costs the runtime's newproc,
// the growth of its stack (growStack), its exit, and the scheduler its
// channel; a pool suite's case starts ten of them, and ends most of them
// normally.
//
// What the program and the reports see does not change: a controlled
// goroutine's descriptor (goid.Curg, gor.gp) is its worker's, recorded
// anew for each use; a stack taken in a controlled goroutine shows the
// worker's loop below its function, a frame of this package that where
// skips, and its "created by" line names the controlled goroutine that
// started the worker first. Schedules do not depend on it: choices are
// made among gor records, whose ids are the run's. What sees runtime
// goroutines rather than controlled ones sees workers: a runtime trace
// (runtime/trace) shows one goroutine running several controlled ones,
// and profiler labels are those of the goroutine that made the worker.
//
// The counts of settleBeforeChoice see workers: a worker on the free list
// is one of the process's goroutines (r.living counts it from the run's
// start, or from its creation), and only the creation of a worker counts
// as a goroutine the run created (r.spawned), not its reuse.
//
// Not reused: a worker whose goroutine panicked, called runtime.Goexit or
// was unwound by a stopped run (its stack went through code that did not
// return; Goexit cannot be stopped), an adopted timer callback's
// goroutine (the runtime's timer code waits for it to return), or one
// beyond maxFree. Such a worker's goroutine ends, as without reuse. At
// the end of the bubble (Close, or the end of Run's bubble) the free
// workers are told to end, so that testing/synctest sees no goroutine
// left in it.

// maxFree bounds the free list of a bubble (a worker keeps a grown
// stack, 16 KiB).
const maxFree = 1024

// worker is a runtime goroutine that runs controlled goroutines one
// after the other. Its fields are set by whoever holds control (the
// controlled goroutine that starts the next one, the coordinator) before
// it hands control to the worker by a send on sem, which orders them.
type worker struct {
	sem chan struct{} // capacity 1: the sem of each controlled goroutine it runs
	gp  uintptr       // its runtime descriptor (goid.Curg)
	// The controlled goroutine it runs next, and its function; g nil:
	// end (the bubble ends).
	r  *run
	g  *gor
	fn func()
}

// gpool is the free list of a bubble: the workers waiting for a
// controlled goroutine to run. It is touched by the goroutine holding
// control, or the bubble's root goroutine between runs.
type gpool struct {
	free []*worker
}

// launch makes fn the function of the new controlled goroutine g, which
// is to run when it is given control: on a free worker, or on a new one.
func (r *run) launch(g *gor, fn func()) {
	p := r.pool
	if n := len(p.free); n > 0 {
		w := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		w.r, w.g, w.fn = r, g, fn
		g.wk, g.sem = w, w.sem
		g.gp.Store(w.gp)
		return
	}
	w := &worker{sem: make(chan struct{}, 1), r: r, g: g, fn: fn}
	g.wk, g.sem = w, w.sem
	r.spawned++
	r.living++
	workersMade.Add(1)
	go w.loop()
}

// workersMade counts the workers made in the process (tests).
var workersMade atomic.Int64

// loop is the body of a worker: it runs controlled goroutines until one
// does not return normally, or the bubble ends.
func (w *worker) loop() {
	growStack()
	w.gp = goid.Curg()
	w.g.gp.Store(w.gp)
	for {
		<-w.sem
		r, g, fn := w.r, w.g, w.fn
		if g == nil {
			return
		}
		w.r, w.g, w.fn = nil, nil, nil
		if stackShrunk() {
			growStack()
		}
		if !r.start(g, fn) {
			return
		}
	}
}

// release puts g's worker on the free list as g ends, reporting whether
// it did; g holds control.
func (r *run) release(g *gor) bool {
	p := r.pool
	if g.wk == nil || len(p.free) >= maxFree {
		return false
	}
	p.free = append(p.free, g.wk)
	return true
}

// drain ends the free workers, on the bubble's root goroutine as the
// bubble ends.
func (p *gpool) drain() {
	for _, w := range p.free {
		w.r, w.g, w.fn = nil, nil, nil
		w.sem <- struct{}{}
	}
	p.free = nil
}
