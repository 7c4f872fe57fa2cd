package coverage

import (
	"context"
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/properties/broken"
)

// The base of the deep mutants conforms, and its runs stay in the model.
func TestCoverDeepBase(t *testing.T) {
	res, err := Run(context.Background(), Config{New: func() executor.Executor { return broken.NewDeep(broken.DeepConfig{}) }, Strategy: "guided", Model: model.Config{Pendings: 2}, Runs: 3000})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.1f%% states, %.1f%% transitions", res.Report.StatePercent(), res.Report.TransitionPercent())
	if res.FirstFailure != nil {
		t.Fatalf("the correct base fails: %v", res.FirstFailure)
	}
}

// The guided strategy catches every deep mutant (W2 T3 K2: a task stolen
// and then NOTIFIED needs a second Pending poll).
func TestCoverDeepMutants(t *testing.T) {
	for _, m := range broken.DeepCatalogue() {
		t.Run(m.Name, func(t *testing.T) {
			res, err := Run(context.Background(), Config{New: m.New, Strategy: "guided", Model: model.Config{Pendings: 2}, Time: 20 * time.Second, StopAtFailure: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.FirstFailure == nil {
				t.Fatalf("not caught in %d runs", res.Report.Runs)
			}
			t.Logf("caught after %d runs, %v: %v", res.FailureRun+1, res.FailureAfter.Round(time.Millisecond), res.FirstFailure)
		})
	}
}
