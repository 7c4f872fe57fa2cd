package properties

import (
	"fmt"
	"testing"

	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/model"
)

// TestMaskedLostRequeue: a conformance failure that is a lost re-queue (a
// NOTIFIED task's Pending poll never queued again) is the defect a wake
// check already reported, whichever wake check saw it; a conformance
// failure of another kind under the same rule is not.
func TestMaskedLostRequeue(t *testing.T) {
	conf, err := Lookup(checkConformance)
	if err != nil {
		t.Fatal(err)
	}
	lost := fmt.Errorf("case: %w", &conform.Error{Rule: model.TASK_SUSPEND, Premise: conform.LostSuspendPremise})
	other := &conform.Error{Rule: model.TASK_SUSPEND, Premise: "state(t) = RUNNING"}
	for _, by := range lostWakeChecks {
		rn := newRunner(nil, nil, &Config{})
		rn.markCaught(by, caughtAt{checkExactlyOnce, checkAnyGoroutine})
		at, ok := rn.masked(conf, lost)
		if !ok || at.root != by {
			t.Errorf("%s reported: a lost re-queue masked = %v at %+v, want masked by %s", by, ok, at, by)
		}
		if by != checkDuringPoll { // waker-during-poll protects TASK-SUSPEND itself
			if _, ok := rn.masked(conf, other); ok {
				t.Errorf("%s reported: another TASK-SUSPEND failure was masked", by)
			}
		}
	}
	if _, ok := newRunner(nil, nil, &Config{}).masked(conf, lost); ok {
		t.Error("nothing reported, yet a lost re-queue was masked")
	}
}
