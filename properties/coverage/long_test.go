package coverage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/checker/cover"
	"github.com/execspec/execspec/internal/testenv"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/properties/broken"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/traces"
)

// TestCoverBenchmarks measures the figures of BENCHMARKS.md's spec-coverage
// section and prints them as markdown tables (EXECSPEC_LONG=1; about 25
// minutes; bench/cover.sh runs it). COVER_SECONDS shortens the 120-second
// budgets.
func TestCoverBenchmarks(t *testing.T) {
	testenv.OptIn(t, "EXECSPEC_LONG")
	long := 120 * time.Second
	if s := os.Getenv("COVER_SECONDS"); s != "" {
		var n int
		fmt.Sscan(s, &n)
		long = time.Duration(n) * time.Second
	}
	var b strings.Builder
	outside := 0
	table := func(title string, cc Config, strategies []string, budget time.Duration) {
		fmt.Fprintf(&b, "\n%s\n\n| strategy | runs | states | transitions | 95%% of states after | every variant fired | outside |\n|---|---|---|---|---|---|---|\n", title)
		for _, s := range strategies {
			c := cc
			c.Strategy, c.Time, c.Seed = s, budget, 1
			var at95 time.Duration
			c.Progress = func(p Progress) {
				if at95 == 0 && p.States > 0 && 100*p.VisitedStates >= 95*p.States {
					at95 = p.Elapsed
				}
			}
			res, err := Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Report
			outside += r.Outside
			all, missing := r.AllVariantsFired()
			fired := "yes"
			if !all {
				fired = "no: " + strings.Join(missing, "; ")
			}
			reach := "—"
			if at95 > 0 {
				reach = fmt.Sprintf("≤ %v", at95.Round(time.Second))
			} else if r.StatePercent() >= 95 {
				reach = "< 1s"
			}
			fmt.Fprintf(&b, "| %s | %d | %d / %d (%.1f %%) | %d / %d (%.1f %%) | %s | %s | %d |\n", s, r.Runs,
				r.VisitedStates, r.ModelStates-r.ExcludedStates, r.StatePercent(),
				r.VisitedTransitions, r.ModelTransitions-r.ExcludedTransitions, r.TransitionPercent(), reach, fired, r.Outside)
		}
		res, _ := Run(context.Background(), Config{Executor: cc.Executor, New: cc.New, Model: cc.Model, Runs: 1})
		fmt.Fprintf(&b, "\nmodel: %s; excluded by design: ", res.Report.Config)
		for _, x := range res.Report.Exclusions {
			fmt.Fprintf(&b, "%d states (%s: %s)", x.States, x.Name, x.Reason)
		}
		b.WriteString("\n")
		t.Logf("%s", b.String())
	}
	all := []string{"guided", "random", "pct"}
	table("worksteal W2 T3 K1 local-cap 2", Config{Model: model.Config{Workers: 2, Tasks: 3, Pendings: 1, LocalCap: 2}}, all, long)
	table("worksteal W3 T4 K1 local-cap 2", Config{Model: model.Config{Workers: 3, Tasks: 4, Pendings: 1, LocalCap: 2}}, all, long)
	for _, ex := range []string{"fifo", "wakeable", "timeslice"} {
		table(ex+" T3 K1 (W1 for fifo, W2 else)", Config{Executor: ex, Model: model.Config{Tasks: 3, Pendings: 1}}, all, long/6)
	}

	// The deep mutants: time to the first failure, median of 5 seeds,
	// 10 s budget per attempt.
	fmt.Fprintf(&b, "\n| mutant | guided | random | pct |\n|---|---|---|---|\n")
	for _, m := range broken.DeepCatalogue() {
		fmt.Fprintf(&b, "| %s |", m.Name)
		for _, s := range all {
			var times []time.Duration
			caught := 0
			for seed := uint64(1); seed <= 5; seed++ {
				res, err := Run(context.Background(), Config{New: m.New, Strategy: s, Seed: seed, Model: model.Config{Pendings: 2}, Time: 10 * time.Second, StopAtFailure: true})
				if err != nil {
					t.Fatal(err)
				}
				if res.FirstFailure != nil {
					caught++
					times = append(times, res.FailureAfter)
				} else {
					times = append(times, time.Hour)
				}
			}
			slices.Sort(times)
			med := "not caught"
			if times[2] < time.Hour {
				med = times[2].Round(time.Millisecond).String()
			}
			fmt.Fprintf(&b, " %d/5, median %s |", caught, med)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nvisited states outside the model, all runs above: %d\n", outside)
	t.Logf("\n%s", b.String())
	if outside != 0 {
		t.Errorf("%d runs outside the model", outside)
	}
}

// BenchmarkCoverRun: one controlled run of the reference workload on the
// work-stealing executor, without and with its projection onto the model
// (what coverage tracking costs).
func BenchmarkCoverRun(b *testing.B) {
	mc, mk, err := Model("worksteal", model.Config{})
	if err != nil {
		b.Fatal(err)
	}
	sp, err := cover.NewSpace(context.Background(), mc, cover.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, project := range []bool{false, true} {
		name := "run"
		if project {
			name = "run+project"
		}
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			cv := cover.New(sp)
			strat := control.Random(1)
			for b.Loop() {
				h, evs, _, err := coverRun((&Config{}).runner(), mk, mc, strat, drawWorkload(mc, rng), nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				if project {
					if _, err := cv.Add(h, traces.All(evs)); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	// The projection alone, of 200 recorded runs in turn.
	type run struct {
		h   traces.Header
		evs []traces.Event
	}
	var runs []run
	rng := rand.New(rand.NewPCG(1, 2))
	strat := control.Random(1)
	for range 200 {
		h, evs, _, err := coverRun((&Config{}).runner(), mk, mc, strat, drawWorkload(mc, rng), nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		runs = append(runs, run{h, evs})
	}
	b.Run("project", func(b *testing.B) {
		cv := cover.New(sp)
		i := 0
		for b.Loop() {
			r := runs[i%len(runs)]
			i++
			if _, err := cv.Add(r.h, traces.All(r.evs)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
