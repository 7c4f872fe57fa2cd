package conform

import (
	"fmt"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/internal/frame"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// FirstDeparture replays events through the correct model of h and returns
// the first departure from the rules: the first event that is not an
// enabled rule, or what only the end of the trace shows (Finish's
// violation, such as an invariant). It returns nil when the trace
// conforms, or when its verdict is unknown.
func FirstDeparture(h traces.Header, events []traces.Event) *Error {
	c, err := New(h)
	if err != nil {
		return &Error{Index: -1, Msg: fmt.Sprintf("the trace's header: %v", err)}
	}
	for _, e := range events {
		if err := c.Step(e); err != nil {
			if ce, ok := err.(*Error); ok {
				return ce
			}
			return &Error{Index: c.Events(), Msg: err.Error()}
		}
	}
	if rep := c.Finish(); rep.Verdict == checker.Violated && rep.Err != nil {
		return rep.Err
	}
	return nil
}

// EventRule returns the rule of the model an event reports (the mapping of
// Conformance's table), or 0 for an event that is no rule (poll-begin,
// requeue, park, unpark, panic).
func EventRule(e traces.Event) model.Rule { return frame.Rule(&e) }
