package rt

import (
	"runtime"
	"sync/atomic"
)

// One P while a run is under control. A controlled run runs one
// goroutine at a time, and every handover of control is a send on the
// next goroutine's channel: the runtime makes the receiver runnable and,
// when a P is idle (with two Ps, always: only one goroutine runs), wakes
// a thread to look for work on it. That thread finds nothing (or steals
// the goroutine just handed control, which then runs on another core,
// its data in the other core's cache) and sleeps again, at every
// handover: CPU spent for nothing a run can use, in futex calls, context
// switches and cache misses rather than in instructions. With one P a
// handover switches goroutines on the thread that runs them. What is not
// controlled (goroutines outside the bubble, the collector's workers)
// still runs, taking turns on that P; what a run observes does not depend
// on how many Ps there are, since every choice is made with every other
// goroutine of the bubble settled.
//
// What the program reads of it does not change: instrumented code calls
// GOMAXPROCS (the rewriter's gomaxprocs rule), which reports the value
// the process had when the run began (ants sizes its workers' channels by
// it at initialisation, which each run does again: with the real value a
// run would take other paths than outside control, and than the
// schedules recorded before). Code that is not instrumented and asks the
// runtime during a run sees 1.

// procsSeen is what runtime.GOMAXPROCS(0) was when the run in progress
// set one P, and what instrumented code has set since; 0 when no run
// holds the P count.
var procsSeen atomic.Int32

// oneProc sets GOMAXPROCS to 1 for a run and returns what puts back the
// value the program sees (GOMAXPROCS). Each change stops the world (about
// 5 µs), against a wake of an idle P saved at every handover.
func oneProc() (restore func()) {
	prev := runtime.GOMAXPROCS(0)
	if prev == 1 {
		return func() {}
	}
	procsSeen.Store(int32(prev))
	runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(int(procsSeen.Swap(0))) }
}

// GOMAXPROCS is runtime.GOMAXPROCS for instrumented code: during a run,
// which runs on one P, it reports the value the process had when the run
// began, and a new value (n > 0) takes effect when the run ends;
// otherwise it is runtime.GOMAXPROCS.
func GOMAXPROCS(n int) int {
	for {
		p := procsSeen.Load()
		if p == 0 {
			return runtime.GOMAXPROCS(n)
		}
		if n <= 0 || procsSeen.CompareAndSwap(p, int32(n)) {
			return int(p)
		}
	}
}
