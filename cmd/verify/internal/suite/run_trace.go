package suite

import (
	"fmt"
	"io"

	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/traces"
	"github.com/execspec/execspec/traces/picture"
)

// runMark returns the timeline's mark for a failure of verify run whose
// executor reported events: the first event that departs from the rules
// (what verify check and verify replay report on the written trace) as the
// root cause, and the property that caught the failure as the symptom, at
// the end of the run. It prints the root cause. Without a departure (the
// property, not a rule, fails) the property is the mark.
func runMark(w io.Writer, h traces.Header, events []traces.Event, caught string) *picture.Mark {
	ce := conform.FirstDeparture(h, events)
	if ce == nil || ce.Index < 0 {
		return &picture.Mark{Index: -1, Message: caught}
	}
	fmt.Fprintf(w, "  root cause: %s\n", traces.Printable(ce.Error()))
	return &picture.Mark{Index: ce.Index, Rule: ce.Rule.String(), Message: ce.Error(), Label: "root cause",
		Symptom: &picture.Symptom{Index: -1, Message: caught}}
}
