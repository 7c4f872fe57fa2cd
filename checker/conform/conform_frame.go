package conform

import (
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/execspec/execspec/checker"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// confFrame is what a streaming trace checker (Conformance,
// PartialChecker) keeps around its rules: the events it was given, the
// last Seq, the first violation, the last conformBefore events (a
// violation's context), and the findings that are no violation (panics,
// warnings). The rules differ; the frame, its Step, and the form of the
// errors it builds, are one.
//
// feed numbers the event (n), has the checker's rules check it, sets
// lastSeq and keeps the event with push once it conforms: a violation's
// Before are the events before it, never the event itself. The frame calls
// the rules of the checker that embeds it directly (conf or part, the one
// that is set), not through an interface, so the event stays on the stack.
// One Step for both costs about 21 instructions an event more than a Step
// written out in each (2.7%; bench/results/conform.md).
type confFrame struct {
	n       int // events given to Step
	lastSeq uint64
	err     *Error
	closed  error // what Step returns after Finish; nil before

	conf *Conformance    // the checker that embeds the frame: one of the two
	part *PartialChecker // is set

	ring  [conformBefore]traces.Event
	ringN int // events pushed into the ring

	panics   []Finding // the first confMaxFindings
	npanics  int
	warnings []Finding // the first confMaxFindings
}

// feed is Step of the checker that embeds c: it returns the violation
// found so far, or the error of a Step after Finish, or numbers event e and
// has the checker's rules check it; an event that conforms is kept for the
// context of a later violation.
func (c *confFrame) feed(e *traces.Event) error {
	if c.err != nil {
		return c.err
	}
	if c.closed != nil {
		return c.closed
	}
	idx := c.n
	c.n++
	var err error
	if c.conf != nil {
		err = c.conf.check(idx, e)
	} else {
		err = c.part.check(idx, e)
	}
	if err != nil {
		return err
	}
	c.lastSeq = e.Seq
	c.push(idx, e)
	return nil
}

// verdict is the verdict of a finished check: Unknown when the violation
// is a limit of the checker, Violated at a violation, Unknown when notDone
// spawned tasks are not DONE at the end, Holds otherwise.
func (c *confFrame) verdict(notDone int) checker.Verdict {
	switch {
	case c.err != nil && c.err.Limit != "":
		return checker.Unknown
	case c.err != nil:
		return checker.Violated
	case notDone > 0:
		return checker.Unknown
	}
	return checker.Holds
}

// Events returns how many events Step has been given.
func (c *confFrame) Events() int { return c.n }

// Err returns the violation found so far, or nil.
func (c *confFrame) Err() *Error { return c.err }

// push keeps event idx, which conforms, for the context of a later
// violation.
func (c *confFrame) push(idx int, e *traces.Event) {
	c.ring[idx%conformBefore] = *e
	c.ringN++
}

// before returns a copy of the events kept before event idx: at most
// conformBefore, fewer when the ring no longer (or never) held them.
func (c *confFrame) before(idx int) []traces.Event {
	first := max(idx-conformBefore, c.ringN-conformBefore, 0)
	end := min(idx, c.ringN)
	before := make([]traces.Event, 0, max(end-first, 0))
	for i := first; i < end; i++ {
		before = append(before, c.ring[i%conformBefore])
	}
	return before
}

// failAt records the violation at event idx, e: the rule it maps onto
// (0 if none), the premise that failed, what held instead, and the state
// then. The message reads "event N (seq S): <what e claims>, but <reason>
// (<label><premise> fails)", events counted from 1.
func (c *confFrame) failAt(idx int, e *traces.Event, r model.Rule, label, premise, reason, state string) error {
	ce := &Error{
		Index: idx, Event: *e, Rule: r, Premise: premise, Reason: reason,
		State: state, Before: c.before(idx),
	}
	ce.Msg = fmt.Sprintf("event %d (seq %d): %s, but %s (%s%s fails)", idx+1, e.Seq, describe(e, r), reason, label, premise)
	c.err = ce
	return ce
}

// taskLimit records an event whose task id is beyond MaxTask, a
// capacity limit of the checker: the check stops with an Unknown verdict.
// Neither the state nor the events before it are kept: at a limit they are
// as large as the limit.
func (c *confFrame) taskLimit(idx int, e *traces.Event, r model.Rule) error {
	ce := &Error{Index: idx, Event: *e, Rule: r, Limit: fmt.Sprintf("task ids up to %d (conform.MaxTask)", MaxTask)}
	ce.Msg = fmt.Sprintf("event %d (seq %d): task id %d is beyond a limit of the checker, %s: no verdict", idx+1, e.Seq, e.Task, ce.Limit)
	c.err = ce
	return ce
}

// panicked counts the panic event idx, e, and lists the first
// confMaxFindings.
func (c *confFrame) panicked(idx int, e *traces.Event) {
	c.npanics++
	if len(c.panics) < confMaxFindings {
		c.panics = append(c.panics, Finding{Index: idx, Seq: e.Seq, Task: e.Task, Worker: int(e.Worker), Msg: fmt.Sprintf("task %d panicked on %s: %s", e.Task, who(int(e.Worker)), firstLine(e.Detail))})
	}
}

// parkPolling warns of the park event idx, e, of worker w while it polls
// task t.
func (c *confFrame) parkPolling(idx int, e *traces.Event, w int, t int64) {
	if len(c.warnings) < confMaxFindings {
		c.warnings = append(c.warnings, Finding{Index: idx, Seq: e.Seq, Task: t, Worker: w, Msg: fmt.Sprintf("worker %d parks while polling task %d", w, t)})
	}
}

// outcomeLines are the words a checker's report opens with: the line of a
// verdict that holds, the line of an unknown one with every event checked
// (tasks not DONE at the end), and what a lost wakeup is.
type outcomeLines struct{ holds, notDone, lost string }

// writeOutcome writes a report's opening lines, a frame both checkers
// share: the violation, or the checker's limit that left the verdict
// unknown, or the checker's own line of the verdict; then the tasks not
// DONE at the end, lost wakeups first.
func writeOutcome(b *strings.Builder, v checker.Verdict, err *Error, lines outcomeLines, lost, never []int64) {
	switch {
	case v == checker.Violated:
		fmt.Fprintf(b, "violated: %s\n", err.Msg)
	case v == checker.Unknown && err != nil:
		fmt.Fprintf(b, "unknown: %s\n", err.Msg)
	case v == checker.Unknown:
		b.WriteString(lines.notDone + "\n")
	default:
		b.WriteString(lines.holds + "\n")
	}
	if len(lost) > 0 {
		fmt.Fprintf(b, "lost wakeups (%s): %s\n", lines.lost, taskList(lost))
	}
	if len(never) > 0 {
		fmt.Fprintf(b, "never completed: %s\n", taskList(never))
	}
}

// writeFindings writes a report's findings, a line each: the panics
// listed, how many more there were (count in all), and the warnings.
func writeFindings(b *strings.Builder, panics []Finding, count int, warnings []Finding) {
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

// checkAll is the check of a whole trace (Check, CheckPartial): unless
// err (the checker's construction failed), it gives c the events until the
// first violation or read error, finishes c, and returns its report and
// the read error.
func checkAll[C interface {
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

// list writes the numbers xs space-separated, each after prefix, at most
// show of them, then more (a format of the count) if there are more.
func list[T int | int64](xs []T, show int, prefix, more string) string {
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

// seqReason says why seq, after last, breaks the order of a trace: the
// clock of a run gives each operation a position of its own, so a seq
// that repeats is as wrong as one that goes back (which of the two came
// first could not be told).
func seqReason(seq, last uint64) string {
	if seq == last {
		return fmt.Sprintf("seq %d repeats: two events at one position of the clock, whose order cannot be told", seq)
	}
	return fmt.Sprintf("seq %d comes after seq %d: the trace is not in Seq order", seq, last)
}

// PremiseWellFormed is the premise of an Error about an event's form, not
// a rule: a field the header or the format rules out (a take when takes
// are unobserved, a poll without the time that slice-us needs, seq out of
// order). A command reports it as bad input rather than as a violation by
// the executor.
const PremiseWellFormed = "a well-formed event"
