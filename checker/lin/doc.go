// Package lin checks the linearizability of a history an executor recorded:
// each operation (a push, a take, a poll's begin and end, a wake) is an
// interval [Call, Return] on one atomic logical clock (never wall time),
// and porcupine searches for an order of the operations, consistent with
// their intervals, that is a legal run of a sequential specification.
//
// # What it checks
//
// Check partitions a trace's history and checks each part against its
// specification: "task" (each task's lifecycle, one partition per task),
// "global" (the global queue, FIFO, in windows that start at a determined
// quiescent point), "local[w]" (worker w's deque, owner end and steal end)
// and "executor" (all of it at once, for short histories). The header's
// policy and configuration choose the specifications (owner LIFO or FIFO,
// a LIFO slot, steal-half, priority, time slice, retry). CheckQueue checks
// the history of one queue (QueueOp) on its own: a deque, a FIFO queue, a
// queue with a slot. It catches what a trace replayed in Seq order cannot
// show: operations whose recorded order is not the order they took effect.
//
// # What it needs
//
// The trace's header and events with Call and Return ticks (events without
// them are instants at their Seq), and Options: a time budget (Budget,
// DefaultBudget), window bounds, the largest history checked
// (MaxEvents), and an HTML file for porcupine's visualization of a
// violation.
//
// # What it returns
//
// A Result: one SpecCheck per specification, and the verdict over them
// (checker.Violated if any is violated, else checker.Unknown if any is
// unknown, else checker.Holds). A spent budget, a window too long, a
// history longer than MaxEvents (TooLong) or a specification the header's
// features leave out is Unknown with Detail saying why, never Holds.
//
// # Example
//
//	res, err := lin.Check(h, events, lin.Options{Budget: 5 * time.Second})
//	if err != nil {
//		return err // a malformed event, named
//	}
//	fmt.Print(res.Summary()) // the verdict, then each specification's
package lin
