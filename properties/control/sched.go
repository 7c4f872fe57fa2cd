package control

import (
	"pgregory.net/rapid"

	"github.com/execspec/execspec/properties/control/sched"
)

// The strategies and schedules live in properties/control/sched (standard
// library only, so that the controlled runtime of instrumented tests stays
// light); these are the same types and values under the names this
// package has always had.
type (
	Decision = sched.Decision
	Strategy = sched.Strategy
	Choice   = sched.Choice
	Replay   = sched.Replay
	PCT      = sched.PCT
	Schedule = sched.Schedule
)

// Errors shared with the controlled runtime (see sched).
var (
	ErrBudget         = sched.ErrBudget
	ErrDiverged       = sched.ErrDiverged
	ErrStrategy       = sched.ErrStrategy
	ErrScheduleSyntax = sched.ErrScheduleSyntax
)

// Random is sched.Random: uniform choices from a PCG stream seeded with seed.
func Random(seed uint64) Strategy { return sched.Random(seed) }

// MaxPCTDepth is the largest PCT depth the property suite and spec
// coverage accept: a depth above the steps of a case means nothing, and
// each level costs memory in every run.
const MaxPCTDepth = 100

// NewPCT is sched.NewPCT.
func NewPCT(depth, steps int, seed uint64) *PCT { return sched.NewPCT(depth, steps, seed) }

// NewReplay is sched.NewReplay.
func NewReplay(s Schedule) *Replay { return sched.NewReplay(s) }

// Load is sched.Load.
func Load(path string) (Schedule, error) { return sched.Load(path) }

// TestdataPath is sched.TestdataPath.
func TestdataPath(testName string) string { return sched.TestdataPath(testName) }

// rapidChooser draws each choice from a rapid test.
type rapidChooser struct {
	t    *rapid.T
	gens []*rapid.Generator[int] // gens[n] draws from [0, n)
}

// RapidChooser returns a Strategy that draws each choice from t with
// rapid.IntRange(0, n-1), labelled "schedule". The schedule is then part of
// the test case: rapid shrinks it together with the workload, towards
// zeros, which means fewer context switches (see Decision.Runnable).
//
// The draws happen on controlled goroutines, one at a time; rapid's own
// panics (when a shrunk case runs out of data) stop the run and are
// re-panicked by Run on the test's goroutine, where rapid expects them.
// Use one RapidChooser per rapid test case.
func RapidChooser(t *rapid.T) Strategy { return &rapidChooser{t: t} }

func (s *rapidChooser) Choose(d Decision) int {
	return draw(s.t, &s.gens, len(d.Runnable), "schedule")
}

// draw draws from [0, n) in t, with one generator per n kept in gens.
func draw(t *rapid.T, gens *[]*rapid.Generator[int], n int, label string) int {
	for len(*gens) <= n {
		*gens = append(*gens, nil)
	}
	if (*gens)[n] == nil {
		(*gens)[n] = rapid.IntRange(0, n-1)
	}
	return (*gens)[n].Draw(t, label)
}

// RapidPCT returns a PCT strategy whose priorities and change points are
// drawn from t, so that they shrink with the workload. Use one per rapid
// test case. steps is k (required: one case is one run, nothing to learn).
func RapidPCT(t *rapid.T, depth, steps int) *PCT {
	var gens []*rapid.Generator[int]
	return sched.NewPCTFunc(depth, max(steps, 1), func(n int) int { return draw(t, &gens, n, "pct") })
}
