package properties

import (
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/coverage"
)

// The suite's coverage goal: met, and missed.
func TestCheckCoverageGoal(t *testing.T) {
	mk := func() executor.Executor {
		return executor.NewWorkSteal(executor.WorkStealConfig{Workers: 2, LocalCap: 2, GlobalInterval: -1})
	}
	for _, c := range []struct {
		goal float64
		want checker.Verdict
	}{{20, checker.Holds}, {100, checker.Violated}} {
		rep := Check(mk, Config{Only: []string{"exactly-once"}, Checks: 5, Coverage: &coverage.Config{Runs: 300, Goal: c.goal}})
		if rep.Coverage == nil {
			t.Fatal("no coverage in the report")
		}
		last := rep.Results[len(rep.Results)-1]
		if last.Property.Name != "spec-coverage" || last.Verdict != c.want {
			t.Errorf("goal %.0f%%: %s %s (%s); %.1f%% reached", c.goal, last.Property.Name, last.Verdict, last.Message, rep.Coverage.Report.StatePercent())
		}
	}
}
