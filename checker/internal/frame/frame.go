package frame

import (
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// MaxTask is the largest task id a trace checker accepts: its tables grow
// to the largest id.
const MaxTask = 1 << 22

// RingSize is how many events an Error shows before the violation.
const RingSize = 20

// MaxFindings bounds the panics and warnings a report lists (the panics
// are all counted), so that a long trace of failing tasks is checked in
// bounded memory.
const MaxFindings = 100

// Frame is what a streaming trace checker (conform.Conformance,
// partial.Checker) keeps around its rules: the events it was given, the
// last Seq, the first violation, the last RingSize events (a violation's
// context), and the findings that are no violation (panics, warnings).
// The rules differ; the frame, and the form of the errors it builds, are
// one.
//
// A checker's Step is Begin, its rules, then Keep once the event
// conforms: a violation's Before are the events before it, never the
// event itself. The checker calls its rules itself, between the two, so
// the event stays on the stack (a rule called through a function value
// would make it escape).
type Frame struct {
	N       int    // events given to Step
	LastSeq uint64 // the Seq of the last event that conformed
	Err     *Error // the first violation, or nil
	Closed  error  // what Step returns after Finish; nil before

	ring  [RingSize]traces.Event
	ringN int // events pushed into the ring

	Panics   []Finding // the first MaxFindings
	NPanics  int       // all of them
	Warnings []Finding // the first MaxFindings
}

// Begin numbers the next event: it returns its index, or the violation
// found so far, or the error of a Step after Finish.
func (c *Frame) Begin() (int, error) {
	if c.Err != nil {
		return 0, c.Err
	}
	if c.Closed != nil {
		return 0, c.Closed
	}
	c.N++
	return c.N - 1, nil
}

// Keep notes event idx, e, which conforms: its Seq, and the event for the
// context of a later violation.
func (c *Frame) Keep(idx int, e *traces.Event) {
	c.LastSeq = e.Seq
	c.ring[idx%RingSize] = *e
	c.ringN++
}

// Last returns the last event kept, if any.
func (c *Frame) Last() (traces.Event, bool) {
	if c.ringN == 0 {
		return traces.Event{}, false
	}
	return c.ring[(c.ringN-1)%RingSize], true
}

// Verdict is the verdict of a finished check: Unknown when the violation
// is a limit of the checker, Violated at a violation, Unknown when notDone
// spawned tasks are not DONE at the end, Holds otherwise.
func (c *Frame) Verdict(notDone int) checker.Verdict {
	switch {
	case c.Err != nil && c.Err.Limit != "":
		return checker.Unknown
	case c.Err != nil:
		return checker.Violated
	case notDone > 0:
		return checker.Unknown
	}
	return checker.Holds
}

// Before returns a copy of the events kept before event idx: at most
// RingSize, fewer when the ring no longer (or never) held them.
func (c *Frame) Before(idx int) []traces.Event {
	first := max(idx-RingSize, c.ringN-RingSize, 0)
	end := min(idx, c.ringN)
	before := make([]traces.Event, 0, max(end-first, 0))
	for i := first; i < end; i++ {
		before = append(before, c.ring[i%RingSize])
	}
	return before
}

// FailAt records the violation at event idx, e: the rule it maps onto
// (0 if none), the premise that failed, what held instead, and the state
// then. The message reads "event N (seq S): <what e claims>, but <reason>
// (<label><premise> fails)", events counted from 1.
func (c *Frame) FailAt(idx int, e *traces.Event, r model.Rule, label, premise, reason, state string) error {
	ce := &Error{
		Index: idx, Event: *e, Rule: r, Premise: premise, Reason: reason,
		State: state, Before: c.Before(idx),
	}
	ce.Msg = fmt.Sprintf("event %d (seq %d): %s, but %s (%s%s fails)", idx+1, e.Seq, Describe(e, r), reason, label, premise)
	c.Err = ce
	return ce
}

// TaskLimit records an event whose task id is beyond MaxTask, a capacity
// limit of the checker: the check stops with an Unknown verdict. Neither
// the state nor the events before it are kept: at a limit they are as
// large as the limit.
func (c *Frame) TaskLimit(idx int, e *traces.Event, r model.Rule) error {
	ce := &Error{Index: idx, Event: *e, Rule: r, Limit: fmt.Sprintf("task ids up to %d (conform.MaxTask)", MaxTask)}
	ce.Msg = fmt.Sprintf("event %d (seq %d): task id %d is beyond a limit of the checker, %s: no verdict", idx+1, e.Seq, e.Task, ce.Limit)
	c.Err = ce
	return ce
}

// Panicked counts the panic event idx, e, and lists the first
// MaxFindings.
func (c *Frame) Panicked(idx int, e *traces.Event) {
	c.NPanics++
	if len(c.Panics) < MaxFindings {
		c.Panics = append(c.Panics, Finding{Index: idx, Seq: e.Seq, Task: e.Task, Worker: int(e.Worker), Msg: fmt.Sprintf("task %d panicked on %s: %s", e.Task, Who(int(e.Worker)), firstLine(e.Detail))})
	}
}

// ParkPolling warns of the park event idx, e, of worker w while it polls
// task t.
func (c *Frame) ParkPolling(idx int, e *traces.Event, w int, t int64) {
	if len(c.Warnings) < MaxFindings {
		c.Warnings = append(c.Warnings, Finding{Index: idx, Seq: e.Seq, Task: t, Worker: w, Msg: fmt.Sprintf("worker %d parks while polling task %d", w, t)})
	}
}

// OutcomeLines are the words a checker's report opens with: the line of a
// verdict that holds, the line of an unknown one with every event checked
// (tasks not DONE at the end), and what a lost wakeup is.
type OutcomeLines struct{ Holds, NotDone, Lost string }

// WriteOutcome writes a report's opening lines: the violation, or the
// checker's limit that left the verdict unknown, or the checker's own line
// of the verdict; then the tasks not DONE at the end, lost wakeups first.
func WriteOutcome(b *strings.Builder, v checker.Verdict, err *Error, lines OutcomeLines, lost, never []int64) {
	switch {
	case v == checker.Violated:
		fmt.Fprintf(b, "violated: %s\n", err.Msg)
	case v == checker.Unknown && err != nil:
		fmt.Fprintf(b, "unknown: %s\n", err.Msg)
	case v == checker.Unknown:
		b.WriteString(lines.NotDone + "\n")
	default:
		b.WriteString(lines.Holds + "\n")
	}
	if len(lost) > 0 {
		fmt.Fprintf(b, "lost wakeups (%s): %s\n", lines.Lost, TaskList(lost))
	}
	if len(never) > 0 {
		fmt.Fprintf(b, "never completed: %s\n", TaskList(never))
	}
}

// WriteFindings writes a report's findings, a line each: the panics
// listed, how many more there were (count in all), and the warnings.
func WriteFindings(b *strings.Builder, panics []Finding, count int, warnings []Finding) {
	for _, f := range panics {
		fmt.Fprintf(b, "panic: %s\n", f)
	}
	if n := count - len(panics); n > 0 {
		fmt.Fprintf(b, "panic: ... and %d more\n", n)
	}
	for _, f := range warnings {
		fmt.Fprintf(b, "warning: %s\n", f)
	}
}

// CheckAll is the check of a whole trace (conform.Check,
// partial.Check): unless err (the checker's construction failed), it
// gives c the events until the first violation or read error, finishes c,
// and returns its report and the read error.
func CheckAll[C interface {
	Step(traces.Event) error
	Finish() R
}, R any](c C, err error, events iter.Seq2[traces.Event, error]) (R, error) {
	if err != nil {
		var none R
		return none, err
	}
	for e, rerr := range events {
		if rerr != nil {
			return c.Finish(), rerr
		}
		if c.Step(e) != nil {
			break
		}
	}
	return c.Finish(), nil
}

// List writes the numbers xs space-separated, each after prefix, at most
// show of them, then more (a format of the count) if there are more.
func List[T int | int64](xs []T, show int, prefix, more string) string {
	var b strings.Builder
	for i, x := range xs {
		if i == show {
			fmt.Fprintf(&b, more, len(xs))
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(prefix)
		b.WriteString(strconv.FormatInt(int64(x), 10))
	}
	return b.String()
}

// TaskList lists tasks as "t1 t2 ...", at most 20 of them.
func TaskList(ts []int64) string { return List(ts, 20, "t", " ... (%d in all)") }

// SeqReason says why seq, after last, breaks the order of a trace: the
// clock of a run gives each operation a position of its own, so a seq
// that repeats is as wrong as one that goes back (which of the two came
// first could not be told).
func SeqReason(seq, last uint64) string {
	if seq == last {
		return fmt.Sprintf("seq %d repeats: two events at one position of the clock, whose order cannot be told", seq)
	}
	return fmt.Sprintf("seq %d comes after seq %d: the trace is not in Seq order", seq, last)
}

// AfterStopHint says what may follow a stop of the given reason.
func AfterStopHint(r traces.StopReason) string {
	if r.Crash() {
		return ": after a crash no event may follow"
	}
	return ": after an orderly stop only wakes may follow (late)"
}
