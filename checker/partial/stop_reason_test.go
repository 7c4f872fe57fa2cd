package partial

import (
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

// TestPartialStopReason: on a partially observed trace, a crash stop loses
// the tasks not DONE (a violation) where a shutdown abandons them; wakes
// after a shutdown are counted, after a crash they are a violation.
func TestPartialStopReason(t *testing.T) {
	trace := func(reason traces.StopReason, wakeAfter bool) []traces.Event {
		b := &pt{}
		b.spawn(1).spawn(2).begin(1, 0).end(1, 0, ready)
		b.add(traces.Event{Kind: traces.KindStop, Worker: -1, Victim: -1, Reason: reason})
		if wakeAfter {
			b.wake(1, -1)
		}
		return b.ev
	}
	r := runPartial(t, tokioHeader(), trace(traces.StopShutdown, true))
	if r.Verdict != checker.Holds || len(r.Abandoned) != 1 || r.WakesAfterStop != 1 || len(r.Lost) != 0 {
		t.Errorf("shutdown: %v, abandoned %v, lost %v, wakes after %d\n%s", r.Verdict, r.Abandoned, r.Lost, r.WakesAfterStop, r.Summary())
	}
	for _, reason := range []traces.StopReason{traces.StopPanic, traces.StopUnwound} {
		r = runPartial(t, tokioHeader(), trace(reason, false))
		if r.Verdict != checker.Violated || len(r.Lost) != 1 || !strings.Contains(r.Err.Msg, "lost in a crash") {
			t.Errorf("%s: %v, lost %v\n%s", reason, r.Verdict, r.Lost, r.Summary())
		}
		r = runPartial(t, tokioHeader(), trace(reason, true))
		if r.Verdict != checker.Violated || !strings.Contains(r.Err.Msg, "after a crash no event may follow") {
			t.Errorf("%s then a wake: %v\n%s", reason, r.Verdict, r.Summary())
		}
	}
}
