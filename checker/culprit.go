package checker

import (
	"fmt"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Diagnosis names a counterexample's root cause and its symptom the way
// every view shows them (the model's table, check, replay, the HTML
// timeline, --json): by the index of an event of the counterexample's
// trace (Counterexample.Events), so that one number means one event
// everywhere.
//
// The culprit is the first event that is not an enabled rule of the
// correct model — found by replaying the trace through Conformance, the
// engine `verify check` and `verify replay` use, so those views cannot
// disagree with it. For a broken variant it is the broken rule's step (a
// dropped WAKE, a duplicate push). The symptom is what the model checker
// caught: the invariant or property, at the last step (a safety
// violation) or at the end of the run (liveness).
type Diagnosis struct {
	// Culprit is the conformance violation at the root cause; nil when
	// every step is an enabled rule of the correct model (a policy that
	// breaks a property, such as priority without aging, breaks no rule).
	Culprit *ConformanceError
	// Symptom is the index of the event where the property was caught;
	// SymptomMsg says what was caught.
	Symptom    int
	SymptomMsg string
	// Property is the invariant or property that caught it.
	Property string
	// Rule is the rule the symptom's invariant protects, or "".
	Rule string
}

// Diagnose returns the diagnosis of the counterexample of r (nil when r
// has none).
func Diagnose(r *Result) *Diagnosis {
	if r == nil || r.Counterexample == nil {
		return nil
	}
	events := r.Counterexample.Events()
	d := &Diagnosis{Symptom: len(events) - 1, SymptomMsg: r.Property + ": " + r.Message, Property: r.Property}
	if n := len(r.Counterexample.Steps); n > 0 {
		d.Rule = r.Counterexample.Steps[n-1].Step.Rule.String()
	}
	d.Culprit = FirstDeparture(HeaderOf(r.Config), events)
	return d
}

// FirstDeparture replays events through the correct model of h and returns
// the first departure from the rules: the first event that is not an
// enabled rule, or what only the end of the trace shows (Finish's
// violation, such as an invariant). It returns nil when the trace
// conforms, or when its verdict is unknown.
func FirstDeparture(h traces.Header, events []traces.Event) *ConformanceError {
	c, err := NewConformance(h)
	if err != nil {
		return &ConformanceError{Index: -1, Msg: fmt.Sprintf("the trace's header: %v", err)}
	}
	for _, e := range events {
		if err := c.Step(e); err != nil {
			if ce, ok := err.(*ConformanceError); ok {
				return ce
			}
			return &ConformanceError{Index: c.Events(), Msg: err.Error()}
		}
	}
	if rep := c.Finish(); rep.Verdict == Violated && rep.Err != nil {
		return rep.Err
	}
	return nil
}

// Mark returns the diagnosis as the timeline's mark: the culprit marked,
// the symptom noted, or, without a culprit, the symptom marked.
func (d *Diagnosis) Mark() *traces.Mark {
	if d.Culprit == nil || d.Culprit.Index < 0 {
		return &traces.Mark{Index: d.Symptom, Rule: d.Rule, Message: d.SymptomMsg}
	}
	return &traces.Mark{
		Index: d.Culprit.Index, Rule: d.Culprit.Rule.String(), Message: d.Culprit.Error(),
		Label:   "root cause",
		Symptom: &traces.Symptom{Index: d.Symptom, Message: d.SymptomMsg},
	}
}

// EventRule returns the rule of the model an event reports (the mapping of
// Conformance's table), or 0 for an event that is no rule (poll-begin,
// requeue, park, unpark, panic).
func EventRule(e traces.Event) model.Rule { return confRule(&e) }
