package properties

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/internal/cputime"
	"github.com/execspec/execspec/properties/control"
)

// benchWorkload is the workload of the speed benchmarks: nine tasks, each
// pending twice, woken during the poll, from another goroutine and after
// the poll, with a poke and a spawned child. On the built-in worksteal
// executor (2 workers) a controlled run of it has about 200 decisions.
func benchWorkload() *Workload {
	step := func(m WakeMode, poke int) Step { return Step{Wake: m, Wakes: 1, Poke: poke} }
	w := &Workload{}
	for i := 0; i < 9; i++ {
		w.Tasks = append(w.Tasks, TaskSpec{Steps: []Step{step(WakeSelf, 0), step(WakeAsync, i+1)}})
	}
	w.Tasks[0].Steps[1].Spawn = []TaskSpec{{Steps: []Step{step(WakeAfter, 0)}}}
	return w
}

// benchCases runs one case per iteration and reports decisions and steps
// per run (controlled), runs per wall-clock second, and runs per CPU-second
// of the process (user + system: the per-core figure, which a loaded machine
// does not distort).
func benchCases(b *testing.B, controlled bool) {
	newWS, _ := executor.Builtin("worksteal")
	w := benchWorkload()
	cfg := &Config{}
	var strat control.Strategy = control.Random(1)
	decisions, steps, runs := 0, 0, 0
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		var ctl *control.Controller
		if controlled {
			ctl = control.NewWith(strat, control.Config{MaxSteps: controlSteps})
		}
		o := runCase(newWS(), w, cfg, ctl)
		for _, p := range suite {
			if p.Costly {
				continue
			}
			if err := p.Check(o); err != nil {
				b.Fatalf("%s: %v", p.Name, err)
			}
		}
		if ctl != nil {
			s := ctl.Schedule()
			decisions += len(s.Choices)
			steps += s.Steps
		}
		runs++
	}
	cpu := cputime.Process() - cpu0
	if controlled {
		b.ReportMetric(float64(decisions)/float64(runs), "decisions/run")
		b.ReportMetric(float64(steps)/float64(runs), "steps/run")
	}
	b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
	if cpu > 0 {
		b.ReportMetric(float64(runs)/cpu.Seconds(), "runs/cpu-s")
	}
}

// BenchmarkControlledCase: one controlled case of the suite (fresh
// executor, the workload under a Controller with seeded random choices,
// every non-costly check) per iteration.
func BenchmarkControlledCase(b *testing.B) { benchCases(b, true) }

// BenchmarkBlackBoxCase: the same case run by the Go scheduler, for
// comparison.
func BenchmarkBlackBoxCase(b *testing.B) { benchCases(b, false) }

// BenchmarkControlledCaseRapid: the controlled case as the suite runs it,
// every scheduling choice drawn from rapid (control.RapidChooser), 100
// cases per rapid.Check; runs counts cases.
func BenchmarkControlledCaseRapid(b *testing.B) {
	newWS, _ := executor.Builtin("worksteal")
	w := benchWorkload()
	cfg := &Config{}
	decisions, runs := 0, 0
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		rapid.Check(b, func(t *rapid.T) {
			ctl := control.NewWith(control.RapidChooser(t), control.Config{MaxSteps: controlSteps})
			o := runCase(newWS(), w, cfg, ctl)
			for _, p := range suite {
				if !p.Costly {
					if err := p.Check(o); err != nil {
						t.Fatalf("%s: %v", p.Name, err)
					}
				}
			}
			decisions += o.Decisions
			runs++
		})
	}
	cpu := cputime.Process() - cpu0
	b.ReportMetric(float64(decisions)/float64(runs), "decisions/run")
	b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
	if cpu > 0 {
		b.ReportMetric(float64(runs)/cpu.Seconds(), "runs/cpu-s")
	}
}
