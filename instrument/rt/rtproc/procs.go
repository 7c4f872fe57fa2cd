package rtproc

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
// The process is on one P while a bubble that makes controlled runs
// lives (a Session's, for all its runs), and back to its Ps after
// (HoldOneProc): code that runs outside control in the same process, a
// stress test's goroutines, keeps its parallelism. The cost: a process
// on one P has one thread for the kernel to schedule, so on a machine
// whose cores are all busy it gets less of one, and takes longer in wall
// time (BENCHMARKS.md, "one P"); GOMAXPROCS set in the environment keeps
// the process's Ps.
//
// What the program reads of it does not change: instrumented code calls
// GOMAXPROCS (the rewriter's gomaxprocs rule), which reports the value
// the process had before it went to one P (ants sizes its workers'
// channels by it at initialisation, which each run does again: with the
// real value a run would take other paths than outside control, and than
// the schedules recorded before). Code that is not instrumented and asks the
// runtime meanwhile sees 1.

// procsSeen is, while the process is held on one P, the P count the
// process had (or what instrumented code set since): what GOMAXPROCS
// reports; 0 when it is not held.
var procsSeen atomic.Int32

// procsFromEnv: GOMAXPROCS is set in the environment; the user chose,
// and the process keeps its Ps.
var procsFromEnv = os.Getenv("GOMAXPROCS") != ""

var (
	procsMu    sync.Mutex
	procsHolds int // under procsMu
)

// HoldOneProc puts the process on one P until release is called, unless
// GOMAXPROCS is set in the environment; holds nest, and the last release
// puts back the P count the program sees. The settle watchdog holds it
// while a bubble that makes controlled runs lives (a Session's, for all
// its runs; Run's, for one run), and each run holds it too; a caller
// that makes many runs, each in a bubble of its own (harness.TestWith),
// holds it across them. Setting the P count stops the world (some
// microseconds, tens on a loaded machine: a tenth of a small case's CPU
// if it were done at each run).
func HoldOneProc() (release func()) {
	if procsFromEnv {
		return func() {}
	}
	procsMu.Lock()
	defer procsMu.Unlock()
	if procsHolds == 0 {
		prev := runtime.GOMAXPROCS(0)
		procsSeen.Store(int32(prev))
		if prev > 1 {
			runtime.GOMAXPROCS(1)
		}
	}
	procsHolds++
	return func() {
		procsMu.Lock()
		defer procsMu.Unlock()
		if procsHolds--; procsHolds == 0 {
			if n := int(procsSeen.Swap(0)); n != runtime.GOMAXPROCS(0) {
				runtime.GOMAXPROCS(n)
			}
		}
	}
}

// Held reports whether the process is held on one P.
func Held() bool { return procsSeen.Load() != 0 }

// GOMAXPROCS is runtime.GOMAXPROCS for instrumented code: while the
// process is held on one P for control, it reports the value the process
// had, and a new value (n > 0) is what it reports from then on and what
// the process gets when the hold ends; otherwise it is
// runtime.GOMAXPROCS.
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
