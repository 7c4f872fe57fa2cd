package rt

import (
	"runtime"
	"sync/atomic"

	"github.com/execspec/execspec/instrument/rt/rtproc"
)

// Reuse of goroutines: each controlled goroutine runs on a worker
// (rtproc.Worker) of the bubble; one whose function returned (not by a
// panic, runtime.Goexit or an abort's unwinding) goes back to the
// bubble's free list (the Bubble's, for all its runs; Run's, for one),
// and a later Go or run's goroutine 0 runs on it. Not reused either: an
// adopted timer callback's goroutine (the runtime's timer code waits for
// it). The free workers end with the bubble, so that testing/synctest
// sees none left. Schedules do not depend on it (choices are among gor
// records, numbered by the run), nor do reports (where skips the
// worker's frames). For settleBeforeChoice a free worker is one of the
// process's goroutines, in r.living from the run's start or its
// creation, and only a worker's creation is one the run made
// (r.spawned).

// workersMade counts the workers made in the process (tests).
var workersMade atomic.Int64

// launch makes fn the function of the new controlled goroutine g, run
// once g is given control: on a free worker, or a new one.
func (r *run) launch(g *gor, fn func()) {
	g.r, g.fn = r, fn
	if g.wk = r.pool.Get(g); g.wk == nil {
		r.spawned++
		r.living++
		workersMade.Add(1)
		g.wk = rtproc.Start(g)
	}
	g.sem = g.wk.Sem()
}

// Run is g's life on its worker (rtproc.Job).
func (g *gor) Run() bool { return g.r.start(g, g.fn) }

// NumGoroutine is runtime.NumGoroutine for instrumented code: called by
// the goroutine holding control, it leaves out the bubble's free
// workers, which without reuse would have ended, so that a program that
// counts its goroutines (a leak check: as many after its goroutines
// ended as before they started) counts as it would outside control.
// Otherwise it is runtime.NumGoroutine. A check that reads stacks
// (runtime.Stack of all goroutines) still sees the free workers, parked
// in rtproc.(*Worker).loop.
func NumGoroutine() int {
	r, g := current()
	if g == nil {
		return runtime.NumGoroutine()
	}
	return runtime.NumGoroutine() - len(r.pool.Free())
}
