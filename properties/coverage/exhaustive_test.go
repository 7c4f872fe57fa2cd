package coverage

import (
	"context"
	"testing"

	"github.com/execspec/execspec/model"
)

// On the reference configuration (worksteal W2 T3 K1, local capacity 2),
// the search pruned on model states already expanded reaches several times
// the states of the stateless depth-first search in the same number of
// runs (which varies the last decisions, shutdown and parking, and stays
// near the first run's states), and no visited state is outside the model.
func TestCoverExhaustivePrunes(t *testing.T) {
	const runs = 400
	visited := map[string]int{}
	for _, s := range []string{"dfs", "exhaustive"} {
		res, err := Run(context.Background(), Config{Strategy: s, Model: model.Config{Workers: 2, Tasks: 3, Pendings: 1, LocalCap: 2}, Runs: runs})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Report
		t.Logf("%s: %d runs, %d of %d states, %+v", s, r.Runs, r.VisitedStates, r.ModelStates, *res.Exhaustive)
		if r.Outside != 0 || res.FirstFailure != nil || res.RunFailures != 0 || res.Exhaustive.Diverged != 0 {
			t.Fatalf("%s: %d outside, %d failed runs, %d diverged: %v", s, r.Outside, res.RunFailures, res.Exhaustive.Diverged, res.FirstFailure)
		}
		if r.Runs != runs {
			t.Fatalf("%s: %d runs, want %d", s, r.Runs, runs)
		}
		visited[s] = r.VisitedStates
		if s == "dfs" && res.Exhaustive.Cuts != 0 {
			t.Errorf("dfs cut %d runs; it keys no state", res.Exhaustive.Cuts)
		}
	}
	if visited["exhaustive"] < 4*visited["dfs"] {
		t.Errorf("exhaustive visited %d states, dfs %d: want at least 4 times as many", visited["exhaustive"], visited["dfs"])
	}
}

// With at most one preemption per run the search of a workload draw ends
// within the budget, and the next draw is searched.
func TestCoverExhaustiveBounded(t *testing.T) {
	res, err := Run(context.Background(), Config{Strategy: "exhaustive", Preemptions: 1, Model: model.Config{Tasks: 2}, Runs: 300})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d states, %+v", res.Report.VisitedStates, res.Report.ModelStates, *res.Exhaustive)
	if res.Report.Outside != 0 || res.FirstFailure != nil {
		t.Fatalf("%d outside: %v", res.Report.Outside, res.FirstFailure)
	}
	if res.Exhaustive.Draws < 2 {
		t.Errorf("%d draws searched in 300 runs with at most one preemption, want the search of the first to end", res.Exhaustive.Draws)
	}
}
