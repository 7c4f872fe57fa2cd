// Package hookless runs the property suite on executors with their
// Scheduler hook unused, under the instrumented engine: built by
// `verify test` (or the suite's own test, TestInstrumentedEngine) with the
// executors' packages instrumented,
//
//	verify test ./properties/testdata/hookless \
//		--instrument github.com/execspec/execspec/executor,github.com/execspec/execspec/properties/broken \
//		--strategy pct --runs 100 --run TestBuiltins
//
// HOOKLESS_EXECUTORS (comma-separated names) narrows TestBuiltins to some
// built-in executors, and HOOKLESS_BROKEN names the catalogue entry of
// properties/broken that TestBroken runs.
package hookless

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
	"github.com/execspec/execspec/properties/coverage"
)

func selected(env string, all []string) []string {
	v := os.Getenv(env)
	if v == "" {
		return all
	}
	return strings.Split(v, ",")
}

// TestBuiltins runs the suite on each built-in executor, its hook unused:
// every case on the instrumented engine.
//
//execspec:nocontrol
func TestBuiltins(t *testing.T) {
	if !properties.UnderEngine() {
		t.Skip("runs under verify test, with github.com/execspec/execspec/executor instrumented")
	}
	for _, name := range selected("HOOKLESS_EXECUTORS", executor.BuiltinNames()) {
		mk, ok := executor.Builtin(name)
		if !ok {
			t.Fatalf("no built-in executor %q", name)
		}
		t.Run(name, func(t *testing.T) {
			rep := properties.Run(t, mk, properties.NoHook())
			cases := 0
			for _, r := range rep.Results {
				cases += r.Cases
			}
			t.Logf("%s: %d cases on the instrumented engine, %v", name, cases, rep.Verdict())
		})
	}
}

// TestBroken runs the suite on a broken executor of properties/broken,
// its hook unused: it must fail.
//
//execspec:nocontrol
func TestBroken(t *testing.T) {
	if !properties.UnderEngine() {
		t.Skip("runs under verify test, with github.com/execspec/execspec/properties/broken instrumented")
	}
	name := os.Getenv("HOOKLESS_BROKEN")
	if name == "" {
		name = "lost-wakeup"
	}
	for _, b := range broken.Catalogue() {
		if b.Name == name {
			properties.Run(t, b.New, properties.NoHook(), properties.WithConfig(properties.Config{StopAtFirst: true}))
			return
		}
	}
	t.Fatalf("no broken executor %q", name)
}

// TestCover measures the spec coverage of the work-stealing executor on
// the reference configuration (coverage.Run), with its hook unused on
// the instrumented engine, or, with HOOKLESS_COVER_HOOK=1, through its
// hook on a control.Controller in the same binary. HOOKLESS_COVER names
// the strategy (random, pct, guided); HOOKLESS_COVER_GOAL the goal in
// percent of the reachable states (default 100), HOOKLESS_COVER_TIME the
// budget (default 60s), HOOKLESS_COVER_RUNS a budget in runs (default
// none), HOOKLESS_COVER_SEED the seed. It logs one line:
// "cover: <json>".
//
//execspec:nocontrol
func TestCover(t *testing.T) {
	strategy := os.Getenv("HOOKLESS_COVER")
	if strategy == "" || !properties.UnderEngine() {
		t.Skip("set HOOKLESS_COVER and run under verify test, with github.com/execspec/execspec/executor instrumented")
	}
	num := func(env string, def float64) float64 {
		v, err := strconv.ParseFloat(os.Getenv(env), 64)
		if err != nil {
			return def
		}
		return v
	}
	cfg := coverage.Config{Executor: "worksteal", Strategy: strategy, Goal: num("HOOKLESS_COVER_GOAL", 100),
		Time: time.Duration(num("HOOKLESS_COVER_TIME", 60) * float64(time.Second)), Seed: uint64(num("HOOKLESS_COVER_SEED", 1)),
		Runs: int(num("HOOKLESS_COVER_RUNS", 0))}
	mode := "hook"
	if os.Getenv("HOOKLESS_COVER_HOOK") != "1" {
		cfg.T, mode = t, "instrumented"
	}
	res, err := coverage.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	j := res.JSON()
	line, _ := json.Marshal(map[string]any{"mode": mode, "strategy": strategy, "seed": cfg.Seed, "runs": j.Runs, "states": j.VisitedStates, "reachable": j.ModelStates - j.ExcludedStates, "transitions": j.VisitedTransitions,
		"state_percent": j.StatePercent, "transition_percent": j.TransitionPercent, "seconds": res.Elapsed.Seconds(), "stopped": res.Stopped, "run_failures": res.RunFailures, "first_failure": j.FirstFailure, "unvisited": j.Unvisited})
	t.Logf("cover: %s", line)
	if res.FirstFailure != nil {
		t.Errorf("a run left the model: %v", res.FirstFailure)
	}
}

// TestCoverJob runs the coverage run that `verify cover --no-hook` asks
// for (coverage.EnvJob) on the instrumented engine, and writes its
// result where the job says. An interrupt stops the runs; what they
// reached is still written.
//
//execspec:nocontrol
func TestCoverJob(t *testing.T) {
	job, ok, err := coverage.JobFromEnv()
	if !ok || !properties.UnderEngine() {
		t.Skip("run by verify cover --no-hook")
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg := job.Config()
	cfg.T = t
	mk, deep, err := broken.DeepNamed(job.Executor, broken.DeepConfig{Workers: job.Model.Workers, LocalCap: job.Model.LocalCap})
	if err != nil {
		t.Fatal(err)
	}
	if deep {
		cfg.New = mk
	}
	cfg.Progress = func(p coverage.Progress) {
		b, _ := json.Marshal(p)
		fmt.Fprintf(os.Stderr, "%s%s\n", coverage.ProgressPrefix, b)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := coverage.Run(ctx, cfg)
	if err := job.WriteResult(res, err); err != nil {
		t.Fatal(err)
	}
}
