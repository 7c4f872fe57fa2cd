// Package gotrace checks the Go scheduler itself, from a Go runtime trace
// (runtime/trace, read by traces.ReadGoTrace): the goroutines' lifecycle
// and how long runnable goroutines waited.
//
// It is a package of its own, not part of conform, because it shares
// nothing with the executor model but the verdict: a Go runtime trace
// records goroutines and Ps, not tasks, queues and wakers, so its events
// are not replayed through package model.
//
// # What it checks
//
// Lifecycle conformance: no goroutine runs on two Ps at once, no P runs two
// goroutines at once, no goroutine runs after it exited or without a wake,
// no wake of a goroutine that is not blocked; and goroutines left runnable
// at the end of the trace (stuck after Options.StuckAfter). The fairness
// figures are, per goroutine, the waits between becoming runnable
// (creation or wake) and running, in time and in runs of other goroutines.
//
// # What it needs
//
// A *traces.GoTrace and Options (the zero value works).
//
// # What it returns
//
// A *Report: checker.Holds or checker.Violated with the Violations in trace
// order, the goroutines LeftRunnable, the Delays and the worst waits. A Go
// trace is checked whole, so there is no budget and no Unknown. WriteText
// prints it as `verify check --go-trace` does.
//
// # Example
//
//	gt, err := traces.ReadGoTrace(f)
//	...
//	rep := gotrace.Check(gt, gotrace.Options{StuckAfter: time.Second})
//	if rep.Verdict == checker.Violated {
//		rep.WriteText(os.Stdout)
//	}
package gotrace
