package rt

import (
	"runtime"

	"github.com/execspec/execspec/executor/point"
)

// Scheduler returns the executor.Scheduler whose yield points are those
// of the run in progress: for code that is not rewritten but runs beside
// instrumented code and wants the same control, such as a test suite that
// drives an instrumented executor (properties.Run). Called by the
// controlled goroutine holding control, its Go starts a controlled
// goroutine (as the go statement's rule does), Yield is a yield point and
// Block a yield point that returns once ready() holds; called by any other
// goroutine, Go is a go statement, Yield is runtime.Gosched and Block
// polls ready with runtime.Gosched between calls.
//
// ready must be side-effect free: the scheduler calls it while every other
// goroutine is settled, to decide who may run, as it reads a channel.
func Scheduler() Sched { return Sched{} }

// Sched is the executor.Scheduler of the run in progress (Scheduler). This
// package does not import package executor, so that executor itself can be
// instrumented; Sched has the interface's methods.
type Sched struct{}

// Go is the go statement (Go).
func (Sched) Go(fn func()) { Go(fn) }

// Yield is a yield point (Gosched).
func (Sched) Yield(point.Point) { Gosched() }

// Block returns once ready() holds (Block).
func (Sched) Block(_ point.Point, ready func() bool) { Block("wait", ready) }

// Block is a yield point that returns once ready() holds (see Scheduler);
// op names the wait in the report of a deadlock ("wait for a wake", ...).
func Block(op string, ready func() bool) {
	r, g := current()
	if g == nil {
		for !ready() {
			runtime.Gosched()
		}
		return
	}
	r.block(g, opWait, wait{op: op, ready: ready})
}

// InRun reports whether a controlled run is in progress in this process
// (inside Run, Replay or a Bubble's Run): a suite that owns its runs
// (calls Run for each case) cannot start one inside another.
func InRun() bool { return active.Load() != nil }

// Goroutines returns how many controlled goroutines the run in progress
// has had so far (goroutine 0, the test's body, included), or 0 outside a
// run. Only the goroutine holding control may call it.
func Goroutines() int {
	r, g := current()
	if g == nil {
		return 0
	}
	return len(r.gs) - len(r.afterTimers)
}
