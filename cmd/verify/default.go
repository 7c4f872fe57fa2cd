package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/explore"
	"github.com/execspec/execspec/model"
)

func init() {
	register(command{name: "default", summary: "", run: runDefault})
}

// runDefault is what `verify` with no arguments does: model-check the
// work-stealing policy on a small configuration, safety and liveness, and
// show that a known bug is caught; then say what to try next.
func runDefault(ctx context.Context, _ []string, stdout, stderr io.Writer) int {
	cfg := model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1, LocalCap: 2}
	fmt.Fprintf(stdout, "execspec: model-checking the work-stealing policy (%s)\n\n", cfg)
	code := exitHolds
	for _, p := range []explore.Property{explore.Safety, explore.EventuallyDone, explore.WokenPolled} {
		r, err := explore.Explore(ctx, cfg, explore.Options{Property: p})
		if err != nil {
			fmt.Fprintf(stderr, "verify: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(stdout, "  %-16s %-8s %d states, %d transitions, %.2fs\n", p, r.Verdict, r.States, r.Transitions, r.Elapsed.Seconds())
		switch r.Verdict {
		case checker.Violated:
			fmt.Fprintf(stdout, "    %s: %s\n", r.Property, r.Message)
			code = exitViolated
		case checker.Unknown:
			if code == exitHolds {
				code = exitUnknown
			}
		}
	}
	fmt.Fprintln(stdout, "\nand each deliberately broken variant of the rules is caught:")
	for _, v := range model.Variants {
		c, p := cfg, explore.Safety
		c.Variant = v.Variant
		if v.Variant == model.NoAging {
			c = model.Config{Policy: model.Priority, Workers: 1, Tasks: 2, Endless: true, Variant: v.Variant}
			p = explore.Fairness
		}
		r, err := explore.Explore(ctx, c, explore.Options{Property: p})
		if err != nil {
			fmt.Fprintf(stderr, "verify: %v\n", err)
			return exitUsage
		}
		steps := 0
		if r.Counterexample != nil {
			steps = len(r.Counterexample.Steps)
		}
		fmt.Fprintf(stdout, "  %-22s %-8s %s after %d steps\n", v.Variant, r.Verdict, r.Property, steps)
		if r.Verdict != checker.Violated && code == exitHolds {
			code = exitViolated // a variant that is not caught is a failure of the checker
		}
	}
	fmt.Fprintln(stdout, "\nTry next:")
	for _, l := range [][2]string{
		{"model --variant lost-wakeup", "a counterexample, step by step, with its trace"},
		{"model --workers 3 --tasks 4 --pendings 2 --property all", ""},
		{"model --list", "the rules, invariants, properties and variants"},
		{"cover --time 20s", "how much of the model a real executor's runs reach"},
		{"run --executor broken/lost-wakeup", "the property suite catching a broken executor"},
		{"test ./pkg --instrument MODULE/...", "a package's tests under controlled schedules, replayable"},
		{"-h", "every command (check, replay, run, test, ...)"},
	} {
		// As the user ran this command: "verify …" or "go run ./cmd/verify …".
		fmt.Fprintln(stdout, strings.TrimRight(fmt.Sprintf("  %-56s %s", selfCommand()+" "+l[0], l[1]), " "))
	}
	return code
}
