// Package partial checks a partially observed trace against the rules it
// can decide: a trace whose header lists the observations its recorder
// could not make (traces.Header.Unobserved), such as a wrapper around the
// futures of an executor one cannot change, which records spawns, polls
// and wakes but no takes: "unobserved":["take","queue","outcome"].
//
// # What it checks
//
// Such a trace does not say where each task is queued, so it cannot be
// replayed through the model. A Checker follows each task through the
// states the observed events decide and checks every premise they decide
// (Rules): no poll after Ready, no concurrent poll of a task, one poll at
// a time per worker, future instances, the waker's scheduling guarantee
// (lost wakeups), no poll without a wake since the last Pending, wakes of
// unknown tasks, and, when observed, wake outcomes and takes. Each rule it
// cannot check is named in the report with the reason: never a silent
// pass. When take, source and queue are all observed the trace is also
// replayed through the model (conform.Conformance), which checks the queue
// rules. With SetFairnessBound a wait longer than the bound, in polls of
// other tasks, is a violation too (bounded-fairness).
//
// # What it needs
//
// The trace's header (New), then the events in Seq order (Step), then
// Finish; Check does all three over an iterator such as
// traces.Reader.All. Memory is bounded by the tasks and workers, not by
// the trace's length. Task ids up to conform.MaxTask are accepted; a
// larger one is a limit of the checker, an Unknown verdict.
//
// # What it returns
//
// Step returns nil or the *conform.Error of the first violation, worded
// as package conform words its own (the two checkers share one frame:
// the events given, the events before a violation, the findings). Finish
// returns a *Report: checker.Violated with Err; checker.Unknown when some
// task is not DONE at the end or a limit was reached; checker.Holds when
// every checked rule holds and every task is DONE. The report lists the
// rules checked and those not checked (Unchecked, with the reason), the
// fairness figures (Delay) and the tasks abandoned at the executor's stop.
//
// # Example
//
//	rd, err := traces.NewReader(f, "run.jsonl")
//	...
//	r, err := partial.Check(rd.Header(), rd.All())
//	...
//	fmt.Print(r.Summary()) // "every checked rule holds: ...", then "not checked (take unobserved): take-rules, ..."
package partial
