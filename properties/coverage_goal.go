package properties

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/coverage"
)

// Config.Coverage: the suite also measures the executor's spec coverage
// (package coverage, with the suite's constructor as its New) and fails
// below the goal or on a visited state outside the model.

// coverageProperty names the spec-coverage result in a Report.
var coverageProperty = &Property{Name: "spec-coverage", Doc: "the runs reach the configured share of the model's states, and none outside it"}

// specCoverage runs cfg.Coverage on newExecutor and returns the result and
// the failure ("" if none): a visited state outside the model, or a share
// below the goal.
func specCoverage(newExecutor func() executor.Executor, cfg *Config) (*coverage.Result, string, error) {
	cc := *cfg.Coverage
	cc.New = newExecutor
	if cc.T == nil {
		cc.T = cfg.engineT
	}
	ctx := cfg.Context
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := coverage.Run(ctx, cc)
	if err != nil {
		return nil, "", err
	}
	r := res.Report
	switch {
	case res.FirstFailure != nil:
		return res, fmt.Sprintf("a run left the model: %v", res.FirstFailure), nil
	case cc.Goal > 0 && r.StatePercent() < cc.Goal:
		return res, fmt.Sprintf("spec coverage %.1f%% of states is below the goal %.1f%%", r.StatePercent(), cc.Goal), nil
	}
	return res, "", nil
}

// runCoverage is the spec-coverage subtest of Run.
func runCoverage(t *testing.T, newExecutor func() executor.Executor, cfg *Config, rep *Report) {
	if cfg.Coverage == nil {
		return
	}
	t.Run(coverageProperty.Name, func(t *testing.T) {
		if cfg.engineT != nil {
			cfg.engineT = t // the engine's runs are bubbles of this subtest
		}
		res, fail, err := specCoverage(newExecutor, cfg)
		rep.Coverage = res
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("spec coverage after %d runs (%v):\n%s", res.Report.Runs, res.Elapsed.Round(time.Millisecond), res.Report)
		if fail != "" {
			t.Fatal(fail)
		}
	})
}

// checkCoverage adds the spec-coverage result to a Report of Check.
func checkCoverage(newExecutor func() executor.Executor, cfg *Config, rep *Report) {
	if cfg.Coverage == nil {
		return
	}
	res := &Result{Property: coverageProperty}
	rep.Results = append(rep.Results, res)
	cr, fail, err := specCoverage(newExecutor, cfg)
	rep.Coverage = cr
	switch {
	case err != nil:
		res.Verdict, res.Caught, res.Message = checker.Violated, coverageProperty.Name, err.Error()
	case fail != "":
		res.Verdict, res.Caught, res.Message = checker.Violated, coverageProperty.Name, fail
	case cr.Stopped == "interrupted":
		res.Verdict = checker.Unknown
	default:
		res.Verdict = checker.Holds
	}
	if cr != nil {
		res.Runs, res.Cases, res.Duration = cr.Report.Runs, cr.Report.Runs, cr.Elapsed
	}
}
