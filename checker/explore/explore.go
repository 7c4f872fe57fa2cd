package explore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
)

// Property names what a model-checking run checks.
type Property string

// Properties of the model checker.
const (
	// Safety: every invariant in every reachable state, no rule applied
	// outside its semantics, and no stuck state (a state with nothing
	// enabled has every task DONE).
	Safety Property = "safety"
	// EventuallyDone: under weak fairness of each worker and each event
	// source, every run ends with every task DONE (◇ all DONE).
	EventuallyDone Property = "eventually-done"
	// WokenPolled: waker liveness: a task that is QUEUED (woken or spawned)
	// is eventually polled (□(QUEUED(t) → ◇RUNNING(t))), under weak fairness.
	WokenPolled Property = "woken-polled"
	// Fairness: □◇QUEUED(t) ⇒ □◇polled(t) for every task, under weak
	// fairness; it needs endless programs to say anything.
	Fairness Property = "fairness"
)

// AllProperties lists the properties in the order `verify model
// --property all` checks them.
var AllProperties = []Property{Safety, EventuallyDone, WokenPolled, Fairness}

// ParseProperty returns the property with the given name.
func ParseProperty(s string) (Property, error) {
	for _, p := range AllProperties {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown property %q (want safety, eventually-done, woken-polled or fairness)", s)
}

// Options bound and steer one model-checking run. The zero Options explore
// everything on every core with no budget and no reduction.
type Options struct {
	Property Property // "" means Safety
	// Budgets: when one is spent the verdict is Unknown. Zero means none.
	// Cancelling the context passed to Explore also gives Unknown, with
	// the counts reached so far.
	MaxStates int64
	MaxBytes  int64
	Timeout   time.Duration
	// Parallel is the number of goroutines that explore (0 means
	// GOMAXPROCS). The counts and verdicts do not depend on it.
	Parallel int
	// Symmetry explores one state per class of states equal up to a
	// permutation of the workers (and, for safety and eventually-done, of
	// tasks with identical programs). Verdicts are unchanged; counts drop.
	Symmetry bool
	// Compact stores each state as indices into a table of shared words,
	// and no parent per state: about half the memory per state, at some
	// speed (BENCHMARKS.md); counterexamples are the same, rebuilt by a
	// backward search of the breadth-first levels.
	Compact bool
	// Invariants names the invariants to check in every state (model.Invariants
	// by name); nil means all of them, an empty non-nil slice none (to show
	// that a liveness property catches a bug on its own). The no-stuck-state
	// check is always made for the safety property.
	Invariants []string
	// Progress, if set, is called about once a second from the exploring
	// goroutine.
	Progress func(Progress)
}

// Progress is a snapshot of a running exploration.
type Progress struct {
	Phase       string // "exploring", or the liveness check under way
	States      int64
	Transitions int64
	Depth       int
	Frontier    int64
	Elapsed     time.Duration
}

// Result is the outcome of a model-checking run: the verdict, the property
// that failed (an invariant's name, model.NoStuckState, or a liveness
// property), the counterexample, and the statistics.
type Result struct {
	Verdict  checker.Verdict
	Property string // what was checked, or what failed
	Message  string // why it failed, or why the verdict is Unknown
	Config   model.Config

	States      int64 // distinct states stored
	Transitions int64 // rule instances fired (edges, counting duplicates)
	Depth       int   // breadth-first depth reached
	Elapsed     time.Duration
	Bytes       int64 // memory held by the state store at the end

	// Workers is the number of goroutines that explored. Efficiency is the
	// share of Workers × Elapsed they spent exploring (0 for one
	// goroutine): the parallel efficiency (speedup ÷ workers) as far as
	// the run itself can tell; a run with --parallel 1 side by side
	// (bench/scale.sh) measures the real speedup.
	Workers    int
	Efficiency float64

	Counterexample *Counterexample
}

// StatesPerSecond returns the exploration rate.
func (r *Result) StatesPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.States) / r.Elapsed.Seconds()
}

// BytesPerState returns the store's memory divided by the states in it.
func (r *Result) BytesPerState() float64 {
	if r.States == 0 {
		return 0
	}
	return float64(r.Bytes) / float64(r.States)
}

// Counterexample is a run of the model that breaks a property: the initial
// state, then each step with the state after it. For a liveness property it
// is a lasso: Steps[Loop:] repeat forever (for a run that stops in a stuck
// state, Loop = len(Steps)). Loop is -1 for a safety counterexample.
type Counterexample struct {
	Init  *model.State
	Steps []CexStep
	Loop  int
	// Incomplete is empty, or says why the steps stop short of the state
	// that breaks the property (a checker bug, reported rather than hidden).
	Incomplete string
}

// CexStep is one step of a counterexample.
type CexStep struct {
	Step  model.Step
	State *model.State
}

var errStop = errors.New("stop")

// Explore model-checks the configuration c for opts.Property.
func Explore(ctx context.Context, c model.Config, opts Options) (*Result, error) {
	if opts.Property == "" {
		opts.Property = Safety
	}
	if _, err := ParseProperty(string(opts.Property)); err != nil {
		return nil, err
	}
	e, stop, err := newSearch(ctx, c, opts)
	if err != nil {
		return nil, err
	}
	defer stop()
	return e.run(), nil
}

// newSearch builds the model of c and an explorer for opts, whose context
// is ctx bounded by opts.Timeout; the caller calls stop when the search
// ends.
func newSearch(ctx context.Context, c model.Config, opts Options) (e *explorer, stop context.CancelFunc, err error) {
	m, err := model.New(c)
	if err != nil {
		return nil, nil, err
	}
	stop = func() {}
	if opts.Timeout > 0 {
		ctx, stop = context.WithTimeout(ctx, opts.Timeout)
	}
	if e, err = newExplorer(ctx, m, opts); err != nil {
		stop()
		return nil, nil, err
	}
	return e, stop, nil
}
