package control

import (
	"testing"

	"github.com/execspec/execspec/executor"
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
	decisions, steps := 0, 0
	runs := 0
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Run(benchProgram(c)); err != nil {
			b.Fatal(err)
		}
		decisions += len(c.choices)
		steps += c.steps
		runs++
	}
	b.ReportMetric(float64(decisions)/float64(runs), "decisions/run")
	b.ReportMetric(float64(steps)/float64(runs), "steps/run")
	b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
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
