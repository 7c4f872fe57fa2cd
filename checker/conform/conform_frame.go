package conform

import (
	"fmt"
	"iter"
	"strings"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// confFrame is what a streaming trace checker (Conformance,
// PartialChecker) keeps around its rules: the events it was given, the
// last Seq, the first violation, the last conformBefore events (a
// violation's context), and the findings that are no violation (panics,
// warnings). The rules differ; the frame, and the form of the errors it
// builds, is one.
//
// A checker's Step numbers the event (n), checks it, sets lastSeq and
// keeps the event with push once it conforms: a violation's Before are the
// events before it, never the event itself. (Step tests err and numbers
// the event itself: a method returning the index and an error costs about
// five instructions an event more, 0.6% of a check.)
type confFrame struct {
	n       int // events given to Step
	lastSeq uint64
	err     *Error

	ring  [conformBefore]traces.Event
	ringN int // events pushed into the ring

	panics   []Finding // the first confMaxFindings
	npanics  int
	warnings []Finding // the first confMaxFindings
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

// stepAll gives c the events until the first violation, and returns the
// first read error: the check of a whole trace (Check,
// CheckPartial), which then finishes c.
func stepAll(c interface{ Step(traces.Event) error }, events iter.Seq2[traces.Event, error]) error {
	for e, err := range events {
		if err != nil {
			return err
		}
		if c.Step(e) != nil {
			break
		}
	}
	return nil
}
