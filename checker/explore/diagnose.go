package explore

import (
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/traces/picture"
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
	Culprit *conform.Error
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
	d.Culprit = conform.FirstDeparture(HeaderOf(r.Config), events)
	return d
}

// Mark returns the diagnosis as the timeline's mark: the culprit marked,
// the symptom noted, or, without a culprit, the symptom marked.
func (d *Diagnosis) Mark() *picture.Mark {
	if d.Culprit == nil || d.Culprit.Index < 0 {
		return &picture.Mark{Index: d.Symptom, Rule: d.Rule, Message: d.SymptomMsg}
	}
	return &picture.Mark{
		Index: d.Culprit.Index, Rule: d.Culprit.Rule.String(), Message: d.Culprit.Error(),
		Label:   "root cause",
		Symptom: &picture.Symptom{Index: d.Symptom, Message: d.SymptomMsg},
	}
}
