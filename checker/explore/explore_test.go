package explore

import (
	"context"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
)

// referenceCounts are the distinct states and transitions that the
// independent reference (a Python explorer, SPIN and TLC, which agree) finds
// for the work-stealing policy with local capacity 2 and two wakes per
// registration. SPIN counts two more transitions than the model has edges
// (its initial step and the terminal state's stutter), so SPINTransitions-2
// is the model's.
var referenceCounts = []struct {
	W, T, K         int
	States          int64
	SPINTransitions int64
}{
	{2, 2, 1, 327, 965},
	{2, 2, 2, 1048, 3247},
	{2, 3, 1, 4692, 17442},
	{3, 3, 1, 13195, 62502},
	{2, 3, 2, 29064, 112768},
	{2, 4, 1, 64751, 282900},
	{3, 3, 2, 80796, 398040},
	{3, 4, 1, 262043, 1441559},
}

func TestReferenceCounts(t *testing.T) {
	for _, rc := range referenceCounts {
		if testing.Short() && rc.States > 100000 {
			continue
		}
		c := model.Config{Policy: model.WorkSteal, Workers: rc.W, Tasks: rc.T, Pendings: rc.K, LocalCap: 2}
		for _, o := range []Options{{Parallel: 1}, {Parallel: 2}, {Parallel: 2, Compact: true}} {
			if o.Compact && rc.States > 30000 {
				continue // the compact store's counts on the larger ones: EXTRA=--compact bash bench/counts.sh
			}
			if raceOn && o.Parallel > 1 && rc.States > 30000 {
				continue // under the race detector, only the small ones in parallel
			}
			par := o.Parallel
			r, err := Explore(context.Background(), c, o)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != checker.Holds {
				t.Fatalf("W=%d T=%d K=%d: %s: %s %s", rc.W, rc.T, rc.K, r.Verdict, r.Property, r.Message)
			}
			if r.States != rc.States || r.Transitions != rc.SPINTransitions-2 {
				t.Errorf("W=%d T=%d K=%d parallel=%d compact=%v: %d states, %d transitions; the reference has %d states, %d transitions",
					rc.W, rc.T, rc.K, par, o.Compact, r.States, r.Transitions, rc.States, rc.SPINTransitions-2)
			}
		}
	}
}
