package control

import (
	"errors"
	"fmt"

	"github.com/execspec/execspec/checker"
)

// ExploreConfig bounds an exhaustive exploration. The zero value explores
// up to DefaultMaxRuns schedules with no preemption bound.
type ExploreConfig struct {
	// MaxRuns bounds the number of runs; when it is reached before every
	// schedule was run, the verdict is Unknown.
	MaxRuns int
	// MaxPreemptions, if positive, explores only the schedules with at most
	// that many preemptions (switches away from a goroutine that could have
	// continued), as CHESS does: most bugs need few, and the number of such
	// schedules grows polynomially, not exponentially, with the length of
	// the run.
	MaxPreemptions int
	// Config is the budget of each run.
	Config Config
	// StateKey, if set, turns on state caching: it is called at every
	// decision and returns the abstract state the program has reached
	// (for execspec, the model state projected from the events recorded
	// so far), or ok false when it cannot say. See DFS.
	StateKey func() (key string, ok bool)
	// BlockDepth, with StateKey, is how many consecutive decisions with
	// the same key get alternatives (0 means 1). See DFS.
	BlockDepth int
}

// DefaultMaxRuns is the run bound of the zero ExploreConfig.
const DefaultMaxRuns = 100_000

// ExploreResult is the outcome of Explore.
type ExploreResult struct {
	// Verdict: Holds when every schedule (within the preemption bound) ran
	// without failure; Violated when one failed; Unknown when MaxRuns was
	// reached first, or a run exceeded its step budget.
	Verdict checker.Verdict
	// Runs is the number of schedules run.
	Runs int
	// Err is the failure (Violated), or why the verdict is Unknown.
	Err error
	// Schedule is the schedule of the failing run; replay it with
	// Controller.Replay.
	Schedule Schedule
}

// Explore runs a program under every schedule, depth first: each run
// follows the choices of the last one up to its last decision with an
// untried alternative, takes the next alternative there, and chooses 0 (no
// preemption) after it. Without cfg.StateKey the search is stateless
// (nothing is cached between runs), so it is for tiny programs: a few
// goroutines and a few dozen decisions; with it, a run that reaches a state
// first reached on another branch gets no alternatives from there on (see
// DFS).
//
// run is called once per schedule with the Controller to use: it must build
// a fresh instance of the program, call c.Run exactly once, check the
// outcome and return the failure, or nil. A run whose c.Run error wraps
// ErrBudget makes the verdict Unknown unless a failure is found; any other
// error returned by run is a failure and stops the search.
//
// The program must be deterministic given its schedule; if a run does not
// match the choices of its prefix (a different number of runnable
// goroutines), Explore stops with an error wrapping ErrDiverged.
func Explore(cfg ExploreConfig, run func(c *Controller) error) ExploreResult {
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	d := NewDFS(cfg)
	c := NewWith(d, cfg.Config)
	var res ExploreResult
	var budget error
	for {
		if res.Runs == cfg.MaxRuns {
			res.Verdict = checker.Unknown
			res.Err = fmt.Errorf("control: explored %d schedules, the run bound, without finishing", res.Runs)
			return res
		}
		d.started = false
		err := run(c)
		res.Runs++
		if !d.started {
			res.Verdict = checker.Unknown
			res.Err = errors.New("control: Explore's run function did not call Controller.Run")
			return res
		}
		if d.err != nil {
			res.Verdict = checker.Unknown
			res.Err = d.err
			return res
		}
		if err != nil {
			if errors.Is(err, ErrBudget) {
				budget = err
			} else {
				res.Verdict = checker.Violated
				res.Err = err
				res.Schedule = c.Schedule()
				return res
			}
		}
		if !d.Next() {
			break
		}
	}
	if budget != nil {
		res.Verdict = checker.Unknown
		res.Err = fmt.Errorf("control: every schedule ran, but some reached the step budget: %w", budget)
		return res
	}
	res.Verdict = checker.Holds
	return res
}
