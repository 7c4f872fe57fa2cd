// Package conform checks a fully observed recorded trace (package traces,
// format v1 or v1.1) against the model: every observed event must be an
// enabled rule.
//
// # What it checks
//
// A Conformance replays a fully observed trace through the open model of
// its header's policy: the first event that is not an enabled rule is the
// violation, reported with the rule, the premise that failed, the model
// state and the events before it. Finish reports lost wakeups, tasks never
// completed, the fairness figures, panics and errors, and for v1.1 traces
// the spurious polls, no-task wakes and the tasks abandoned at the
// executor's stop. The doc comment of Conformance states how events map
// onto rules, and which premises are relaxed for takes a real executor
// cannot make atomic; under "order":"intervals" (lock-free recorders) the
// takes are read in the orders their intervals allow (the internal
// package interval, whose doc states the orders tried), with a bounded
// search over the readings of batch steals (conform_interval_batch_search.go)
// and an index of the global queue (the internal package globalq).
//
// A partially observed trace (a header that lists Unobserved kinds, such
// as a wrapper around the futures of an executor one cannot change) is
// checked by package checker/partial instead, which replays it through a
// Conformance too when its queues are observed. The two checkers stream:
// memory is bounded by the tasks and workers, not by the trace's length,
// and both keep the same frame around their rules (the events given, the
// last events before a violation, the findings), so their errors (Error)
// and reports read the same.
//
// # What it needs
//
// The trace's header (New), then the events in Seq order (Step), then
// Finish. Check does all three over an iterator such as
// traces.Reader.All. Task ids up to MaxTask are accepted; a larger one is
// a limit of the checker, an Unknown verdict, never a violation.
//
// # What it returns
//
// Step returns nil or the *Error of the first violation (the same one again
// after it). Finish returns a *Report: checker.Violated with Err when an
// event is not an enabled rule; checker.Unknown when every event conforms
// but some task is not DONE at the end (a finite trace cannot tell a task
// that would never finish from one that had not finished yet), or a limit
// was reached; checker.Holds when every event conforms and every spawned
// task is DONE. FirstDeparture returns just the first departure of a whole
// trace, EventRule and Describe the rule an event reports and its
// description, as messages word them. HeaderPolicy, State and the other
// accessors of open.go serve a caller that follows the open model along a
// trace (spec coverage, package checker/cover).
//
// # Example
//
//	h, events, err := traces.ParseText(r)
//	...
//	c, err := conform.New(h)
//	...
//	for _, e := range events {
//		if err := c.Step(e); err != nil {
//			fmt.Println(err) // "event 11 (seq 11): WORKER-STEAL by worker 1 of task 3 from worker 0, but w1's local queue holds [t4] (premise local(w) = ∅ fails)"
//			break
//		}
//	}
//	fmt.Print(c.Finish().Summary())
package conform
