// Package point names the yield points of an executor under a Scheduler
// (executor.Point and its constants are these). It imports nothing, so
// that the controlled runtime (instrument/rt) and the strategies
// (properties/control) can speak of yield points without importing
// package executor: that is what lets package executor itself be
// instrumented, its code calling the runtime, with no import cycle.
package point

// Point names a yield point, for a Scheduler's log and choices.
type Point uint8

// Yield points of the built-in executors.
const (
	None     Point = iota
	Push           // before a push onto a queue
	Pop            // before a pop from a queue
	Steal          // before a steal
	Wake           // before a wake takes effect
	Park           // before a worker parks
	Poll           // before a poll
	Lock           // before a lock is taken
	Spawn          // before a task is spawned
	Register       // after a poll registered its waker, before it returns Pending
)
