package main

import (
	"strings"
	"testing"

	"github.com/execspec/execspec/internal/testenv"
)

// verify cover --no-hook builds the instrumented test binary and runs the
// coverage on the engine: the work-stealing executor and the base of the
// deep-state mutants, hook unused, reach every state they can reach
// within a budget in runs (a seed's runs are deterministic on the
// engine); a deep-state mutant is caught; an unknown executor or
// strategy is refused before the build;
// outside a module that has execspec's source it says so.
func TestCoverNoHook(t *testing.T) {
	testenv.GoBuild(t, "builds an instrumented test binary")
	type result struct {
		NoHook       bool    `json:"no_hook"`
		Verdict      string  `json:"verdict"`
		Stopped      string  `json:"stopped"`
		StatePercent float64 `json:"state_percent"`
		Visited      int     `json:"visited_states"`
		Outside      int     `json:"outside"`
		FirstFailure string  `json:"first_failure"`
		Guided       *struct {
			Paths    int `json:"paths"`
			Realized int `json:"realized"`
		} `json:"guided"`
	}
	j, _ := runJSON[result](t, exitHolds, "cover", "--no-hook", "--goal", "100", "--runs", "5000", "--seed", "12", "--json", "-q")
	if !j.NoHook || j.Stopped != "goal" || j.StatePercent != 100 || j.Visited != 1568 || j.Outside != 0 {
		t.Fatalf("worksteal, hook unused: %+v, want every one of the 1568 states within 5000 runs", j)
	}
	if j.Guided == nil || j.Guided.Realized == 0 {
		t.Errorf("no guided path followed to its end on the engine: %+v", j.Guided)
	}
	// The base of the deep-state mutants has no yield point between its
	// register event and the future's wakes: the workload's own pause
	// lets a guided path run others there.
	j, _ = runJSON[result](t, exitHolds, "cover", "--no-hook", "--executor", "deep", "--goal", "100", "--runs", "5000", "--json", "-q")
	if j.Stopped != "goal" || j.Visited != 1568 {
		t.Fatalf("deep, hook unused: %+v, want every one of the 1568 states within 5000 runs", j)
	}

	code, out, errs := run(t, "cover", "--no-hook", "--executor", "deep/busy-notify-global", "--stop-at-failure", "--runs", "2000", "-q")
	if code != exitViolated || !strings.Contains(out, "hook unused, instrumented engine") || !strings.Contains(out, "first failure") {
		t.Fatalf("deep/busy-notify-global, hook unused: exit %d, want %d with its first failure:\n%s%s", code, exitViolated, out, errs)
	}

	if code, _, errs := run(t, "cover", "--no-hook", "--executor", "deep/nope", "-q"); code != exitUsage || !strings.Contains(errs, `no deep-state mutant "nope"`) {
		t.Errorf("an unknown mutant: exit %d, %s", code, errs)
	}
	if code, _, errs := run(t, "cover", "--no-hook", "--executor", "nope", "-q"); code != exitUsage || !strings.Contains(errs, `unknown executor "nope"`) {
		t.Errorf("an unknown executor: exit %d, %s", code, errs)
	}
	if code, _, errs := run(t, "cover", "--no-hook", "--strategy", "nope", "-q"); code != exitUsage || !strings.Contains(errs, `unknown strategy "nope"`) {
		t.Errorf("an unknown strategy: exit %d, %s", code, errs)
	}
	t.Chdir(t.TempDir())
	if code, _, errs := run(t, "cover", "--no-hook", "-q"); code != exitUsage || !strings.Contains(errs, "requires it") {
		t.Errorf("outside a module with execspec's source: exit %d, want %d with why:\n%s", code, exitUsage, errs)
	}
}
