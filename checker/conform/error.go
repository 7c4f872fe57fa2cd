package conform

import (
	"github.com/execspec/execspec/checker/internal/frame"
	"github.com/execspec/execspec/traces"
)

// Error is the first event of a trace that is not an enabled rule of the
// model (the partial checker's violations are Errors too). Its fields:
//
//	Index   int          // position of the event in the trace, from 0
//	Event   traces.Event // the event
//	Rule    model.Rule   // the rule it maps onto; 0 for an event that is no rule
//	Premise string       // the premise that failed, e.g. "local(w) = ∅"
//	Reason  string       // what held instead, e.g. "w2's local queue holds [t17]"
//	State   string       // the model state (lanes) when the premise was evaluated
//	Before  []traces.Event // up to 20 events before it
//	Msg     string       // the whole message, as Error returns it
//	Limit   string       // a limit of the checker the event exceeds (such as MaxTask), if any
//
// An Error with a Limit makes the verdict Unknown, not Violated: the
// checker cannot say whether the event is an enabled rule, and the
// executor is not at fault. Its Error method returns e.g. "event 1832
// (seq 4410): WORKER-STEAL by worker 2 of task 9 from worker 0, but w2's
// local queue holds [t17] (premise local(w) = ∅ fails)", events counted
// from 1; LostWake reports whether it is a wake lost during a poll (a
// NOTIFIED task's poll returned Pending and the executor never queued it
// again, as a later take or wake showed).
type Error = frame.Error

// Finding is something a trace shows that is not a violation of a rule:
// a task's panic, or a warning. Its fields are Index (the event's position
// in the trace, from 0), Seq, Task (0 if none), Worker (-1 if none) and
// Msg; it prints as "event N (seq S): Msg".
type Finding = frame.Finding

// MaxTask, 1<<22 (4,194,304), is the largest task id a Conformance (or a
// partial checker) accepts: the checker's tables grow to the largest id.
// A larger one is a limit of the checker, an Unknown verdict, never a
// violation.
const MaxTask = frame.MaxTask

// LostSuspendPremise is the premise a lost re-queue breaks, "TASK-SUSPEND
// of a NOTIFIED task re-queues it (the wake during the poll is not
// lost)": the Premise of an Error for which LostWake is true.
const LostSuspendPremise = frame.LostSuspendPremise

// PremiseWellFormed, "a well-formed event", is the premise of an Error
// about an event's form, not a rule: a field the header or the format
// rules out (a take when takes are unobserved, a poll without the time
// that slice-us needs, seq out of order). A command reports it as bad input rather than as a violation by
// the executor.
const PremiseWellFormed = frame.PremiseWellFormed

// Step checks the next event. It returns nil, or the *Error of the
// first violation; once a violation was found every later call returns it
// again. Events must come in Seq order.
func (c *Conformance) Step(e traces.Event) error { return c.step(&e) }

// step is Step on the frame: number the event, check it, keep it.
func (c *Conformance) step(e *traces.Event) error {
	idx, err := c.fr.Begin()
	if err != nil {
		return err
	}
	if err := c.check(idx, e); err != nil {
		return err
	}
	c.fr.Keep(idx, e)
	return nil
}

// Events returns how many events Step has been given.
func (c *Conformance) Events() int { return c.fr.N }

// Err returns the violation found so far, or nil.
func (c *Conformance) Err() *Error { return c.fr.Err }
