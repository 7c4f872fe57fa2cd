package control

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/internal/cputime"
)

// benchProgram is the synthetic workload of the benchmarks: 4 goroutines,
// each taking a lock (Block) 25 times and yielding inside and outside it.
// A run has about 200 decisions.
func benchProgram(c *Controller) func() {
	m := &mutex{s: c}
	shared := 0
	return func() {
		for range 4 {
			c.Go(func() {
				for range 25 {
					m.Lock()
					shared++
					c.Yield(executor.PointPush)
					m.Unlock()
					c.Yield(executor.PointPop)
				}
			})
		}
	}
}

func benchRuns(b *testing.B, c *Controller) {
	benchLoop(b, c, func() func() { return benchProgram(c) })
}

// benchLoop runs the program that prog makes, once per iteration, and
// reports decisions and steps per run, runs per wall-clock second, and runs
// per CPU-second of the process (user + system time: the per-core figure,
// which a loaded machine does not distort; with -cpu 1 it is the figure of
// one core).
func benchLoop(b *testing.B, c *Controller, prog func() func()) {
	decisions, steps, runs := 0, 0, 0
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		if err := c.Run(prog()); err != nil {
			b.Fatal(err)
		}
		decisions += len(c.choices)
		steps += c.steps
		runs++
	}
	cpu := cputime.Process() - cpu0
	b.ReportMetric(float64(decisions)/float64(runs), "decisions/run")
	b.ReportMetric(float64(steps)/float64(runs), "steps/run")
	b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
	if cpu > 0 {
		b.ReportMetric(float64(runs)/cpu.Seconds(), "runs/cpu-s")
	}
}

// BenchmarkRunRandom: controlled runs with random choices.
func BenchmarkRunRandom(b *testing.B) { benchRuns(b, New(Random(1))) }

// BenchmarkRunReplay: the same workload replaying one recorded schedule.
func BenchmarkRunReplay(b *testing.B) {
	c := New(Random(1))
	if err := c.Run(benchProgram(c)); err != nil {
		b.Fatal(err)
	}
	c.SetStrategy(NewReplay(c.Schedule()))
	benchRuns(b, c)
}

// BenchmarkRunNoSwitch: choices that never preempt (always index 0): the
// cost of the yield points without goroutine switches, for comparison.
func BenchmarkRunNoSwitch(b *testing.B) { benchRuns(b, New(zeroStrategy{})) }

type zeroStrategy struct{}

func (zeroStrategy) Choose(Decision) int { return 0 }

// BenchmarkRunWorksteal: the built-in work-stealing executor (two workers)
// under random choices, on the small workload of the executor tests.
func BenchmarkRunWorksteal(b *testing.B) {
	c := New(Random(1))
	benchLoop(b, c, func() func() {
		prog, _ := builtinProgram(b, c, "worksteal", nil)
		return prog
	})
}

// BenchmarkRunRapid: the synthetic workload with every choice drawn from
// rapid (RapidChooser), as the property suite runs it. One iteration is
// one rapid.Check of 100 cases, each one controlled run; the metrics are
// per run.
func BenchmarkRunRapid(b *testing.B) {
	c := New(Random(1))
	runs, decisions := 0, 0
	cpu0 := cputime.Process()
	for b.Loop() {
		rapid.Check(b, func(rt *rapid.T) {
			c.SetStrategy(RapidChooser(rt))
			if err := c.Run(benchProgram(c)); err != nil {
				rt.Fatal(err)
			}
			runs++
			decisions += len(c.choices)
		})
	}
	cpu := cputime.Process() - cpu0
	b.ReportMetric(float64(decisions)/float64(runs), "decisions/run")
	b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
	if cpu > 0 {
		b.ReportMetric(float64(runs)/cpu.Seconds(), "runs/cpu-s")
	}
}
