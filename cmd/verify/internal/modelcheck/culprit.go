package modelcheck

import (
	"fmt"
	"io"

	"github.com/execspec/execspec/checker/explore"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/traces"
)

// The root cause and the symptom of a model counterexample, printed the
// way check and replay print a violation: by the event's number in the
// counterexample's trace (explore.Diagnosis).

// printDiagnosis prints the root cause (the first event that departs from
// the rules, as verify check and verify replay report it) and the symptom.
func printDiagnosis(w io.Writer, d *explore.Diagnosis) {
	if d == nil {
		return
	}
	if d.Culprit != nil && d.Culprit.Index >= 0 {
		fmt.Fprintf(w, "  root cause: %s\n", d.Culprit.Error())
		fmt.Fprintf(w, "  symptom:    event %d: %s\n", d.Symptom+1, d.SymptomMsg)
		return
	}
	fmt.Fprintf(w, "  root cause: no single event: every step is an enabled rule of the correct model; the run as a whole breaks %s\n", d.Property)
}

// printSteps prints the steps as a numbered list with a column per worker
// showing the task it holds after the step. The numbers are the events of
// the counterexample's trace (an event that is no step of its own, such as
// the requeue that ends a NOTIFIED task's poll, gets its own row), and the
// root cause and the symptom are pointed at.
func printSteps(w io.Writer, workers int, cx *explore.Counterexample, d *explore.Diagnosis) {
	events, at := cx.StepEvents()
	culprit := -1
	if d != nil && d.Culprit != nil {
		culprit = d.Culprit.Index
	}
	note := func(i int) string {
		switch {
		case i == culprit && d != nil && i == d.Symptom:
			return "  ← root cause and symptom"
		case i == culprit:
			return "  ← root cause"
		case d != nil && i == d.Symptom && culprit >= 0:
			return "  ← symptom"
		}
		return ""
	}
	fmt.Fprintf(w, "    %4s  %-14s", "#", "rule")
	for k := 0; k < workers; k++ {
		fmt.Fprintf(w, " %-5s", fmt.Sprintf("w%d", k))
	}
	fmt.Fprintf(w, " %-14s %s\n", "global", "step")
	for k, cs := range cx.Steps {
		mark := " "
		if k == cx.Loop {
			mark = "↻"
		}
		fmt.Fprintf(w, "  %s %4d  %-14s", mark, at[k]+1, cs.Step.Rule)
		s := cs.State
		lanes := ""
		for v := 0; v < workers; v++ {
			lane := "·"
			if s != nil && s.Cur[v] != 0 {
				lane = fmt.Sprintf("t%d", s.Cur[v])
			}
			lanes += fmt.Sprintf(" %-5s", lane)
		}
		g := ""
		if s != nil {
			g = fmt.Sprint(s.Global)
		}
		what := cs.Step.String()
		if e := events[at[k]]; e.Kind == traces.KindWake && e.Outcome != traces.OutcomeNone {
			what += ": " + e.Outcome.String()
		}
		fmt.Fprintf(w, "%s %-14s %s%s\n", lanes, g, what, note(at[k]))
		end := len(events)
		if k+1 < len(at) {
			end = at[k+1]
		}
		for i := at[k] + 1; i < end; i++ {
			fmt.Fprintf(w, "    %4d  %-14s%s %-14s (%s)%s\n", i+1, "", lanes, g, cli.ShortEvent(events[i]), note(i))
		}
	}
	if cx.Loop >= 0 && cx.Loop < len(cx.Steps) {
		last := len(events)
		fmt.Fprintf(w, "    ↻ events %d..%d repeat forever\n", at[cx.Loop]+1, last)
	} else if cx.Loop == len(cx.Steps) {
		fmt.Fprintln(w, "    the run stops here: no rule is enabled")
	}
}

// culpritJSON is the root cause or the symptom in --json output: the
// event's number (from 1, as every view counts) and what it broke.
type culpritJSON struct {
	Event   int    `json:"event"`
	Rule    string `json:"rule,omitempty"`
	Message string `json:"message"`
}

func diagnosisJSON(d *explore.Diagnosis) (root, symptom *culpritJSON) {
	if d == nil {
		return nil, nil
	}
	symptom = &culpritJSON{Event: d.Symptom + 1, Rule: d.Rule, Message: d.SymptomMsg}
	if d.Culprit != nil && d.Culprit.Index >= 0 {
		root = &culpritJSON{Event: d.Culprit.Index + 1, Rule: d.Culprit.Rule.String(), Message: d.Culprit.Error()}
	}
	return root, symptom
}
