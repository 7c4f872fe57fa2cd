package rt

import (
	"os"
	"runtime"
	"sync"
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
// A process that makes controlled runs through a Session or TestWith
// stays on one P from the first (holdOneProc); a run made on its own (Run,
// Replay) sets one P for itself (oneProc).
//
// What the program reads of it does not change: instrumented code calls
// GOMAXPROCS (the rewriter's gomaxprocs rule), which reports the value
// the process had before it went to one P (ants sizes its workers' channels by
// it at initialisation, which each run does again: with the real value a
// run would take other paths than outside control, and than the
// schedules recorded before). Code that is not instrumented and asks the
// runtime meanwhile sees 1.

// procsSeen is what runtime.GOMAXPROCS(0) was when one P was set for
// control, and what instrumented code has set since; 0 when the P count
// is the process's own.
var procsSeen atomic.Int32

// procsFromEnv: GOMAXPROCS is set in the environment; the user chose,
// and the process keeps its Ps.
var procsFromEnv = os.Getenv("GOMAXPROCS") != ""

var holdOnce sync.Once

// holdOneProc runs the process on one P from now on, unless GOMAXPROCS
// is set in the environment: a process that makes controlled runs
// (a Session, TestWith) keeps one P between them, as it keeps the
// ballast (gc.go), since setting it stops the world (some microseconds,
// tens on a loaded machine: a tenth of a small case's CPU if done at
// each run). Code that is not instrumented sees 1 from then on (tests
// of the same binary that run in parallel take turns on the P).
func holdOneProc() { holdOnce.Do(holdProcs) }

func holdProcs() {
	if procsFromEnv || procsSeen.Load() != 0 {
		return
	}
	if prev := runtime.GOMAXPROCS(0); prev > 1 {
		procsSeen.Store(int32(prev))
		runtime.GOMAXPROCS(1)
	}
}

// oneProc sets GOMAXPROCS to 1 for a run made outside a process that
// holds one P (Run, Replay) and returns what puts back the value the
// program sees (GOMAXPROCS).
func oneProc() (restore func()) {
	if procsFromEnv || procsSeen.Load() != 0 {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(0)
	if prev == 1 {
		return func() {}
	}
	procsSeen.Store(int32(prev))
	runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(int(procsSeen.Swap(0))) }
}

// GOMAXPROCS is runtime.GOMAXPROCS for instrumented code: while the
// process runs on one P for control, it reports the value the process
// had, and a new value (n > 0) is what it reports from then on (and
// what a run made outside a Session puts back when it ends); otherwise
// it is runtime.GOMAXPROCS.
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
