package properties

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/properties/coverage"
	"github.com/execspec/execspec/properties/internal/guard"
	"github.com/execspec/execspec/properties/internal/rapidrun"
)

var checksFlag = flag.Int("properties.checks", envInt("PROPERTIES_CHECKS", 200), "properties: cases per property (overrides -rapid.checks; env PROPERTIES_CHECKS)")

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// Config says how the suite runs. The zero Config runs every property with
// the default number of cases, timeouts and shrink time.
type Config struct {
	// Checks is the number of cases per property; 0 means the value of the
	// -properties.checks flag (default 200, env PROPERTIES_CHECKS).
	Checks int
	// Seed is rapid's base seed; 0 means rapid's -rapid.seed flag, or a
	// random seed when that is 0 too.
	Seed uint64
	// Only runs just the named properties; Skip leaves the named ones out.
	Only, Skip []string
	// Cases, when not empty, draws only the cases of the named properties,
	// while every selected property is still checked on them: how a
	// failure found in one property's cases is drawn again.
	Cases []string
	// Timeout bounds one case (default 10s); Idle is how long a case may
	// show no poll, wake or spawn before it counts as hung (default 500ms;
	// twice that when a goroutine was still running or runnable at the
	// end of the first period: a worker on a thread the operating system
	// stopped runs late, it has not hung).
	Timeout, Idle time.Duration
	// ShrinkTime bounds the shrinking of one failure (default 3s, so that
	// the first shrunk failure comes within seconds).
	ShrinkTime time.Duration
	// StopAtFirst stops the suite at the first failing property.
	StopAtFirst bool
	// Context, when cancelled, ends the run early: the properties not yet
	// finished are reported with verdict Unknown. Nil means never.
	Context context.Context
	// Progress, when set, is called after every case.
	Progress func(Progress)
	// Uncontrolled runs an executor.Controllable executor as a black box
	// too. By default its cases run under a control.Controller: one
	// goroutine at a time, each choice drawn from rapid (so the schedule
	// shrinks with the workload and a failure replays exactly), a hang
	// found at once as a deadlock.
	Uncontrolled bool
	// NoHook never sets the Scheduler of an executor.Controllable: it runs
	// as an executor without the hook would, under the instrumented engine
	// when its package is instrumented (see UnderEngine), as a black box
	// otherwise.
	NoHook bool
	// FairnessBound, when above 0, is the fairness bound in polls of other
	// tasks (as executor.Bounded states it) to hold an executor to that
	// states none of its own; a task fails when every worker ended more
	// than that many polls of others while it waited, plus 2 per worker
	// (takes the check cannot see). Without it, or FairnessWait, or a bound
	// stated by the executor, the default holds: 1,000 polls of other tasks
	// by every worker and 1 s (properties/internal/fair says why).
	FairnessBound int
	// FairnessWait, when above 0, is a fairness bound in time (as
	// executor.BoundedWait states it) for an executor that states none; a
	// task fails past 3×FairnessWait + 500 ms (the clock's and the operating
	// system's share), on black-box cases only. Setting both is an error.
	FairnessWait time.Duration
	// PCTDepth, when above 0, draws schedules with PCT of that depth
	// (priorities and change points from rapid) instead of a choice from
	// rapid at every decision.
	PCTDepth int

	// NoSpuriousPolls holds the executor to polling a task only after its
	// spawn or a wake of its own, as executor.SpuriousPoller false states:
	// a spurious poll then fails waker-idempotence instead of being
	// counted as information.
	NoSpuriousPolls bool

	// Coverage, when set, also measures the executor's spec coverage
	// (package coverage; its New is the suite's constructor) and fails below its Goal
	// or on a visited state outside the model (coverage_goal.go).
	Coverage *coverage.Config

	// set records what the options of Run set, and conflicts what two of
	// them set differently (options.go).
	set       map[string]string
	conflicts []string
	// failfile is a rapid failfile to replay (verify test --replay).
	failfile string
	// engineT is Run's test when its cases run on the instrumented
	// engine: the coverage runs go there too.
	engineT *testing.T
}

// controlSteps bounds the yield points of one controlled case.
const controlSteps = 500_000

func (c *Config) timeout() time.Duration { return orDefault(c.Timeout, 10*time.Second) }
func (c *Config) idle() time.Duration    { return orDefault(c.Idle, 500*time.Millisecond) }
func (c *Config) shrinkTime() time.Duration {
	return orDefault(c.ShrinkTime, 3*time.Second)
}
func (c *Config) checks() int {
	if c.Checks > 0 {
		return c.Checks
	}
	return *checksFlag
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// MaxPCTDepth is the largest PCTDepth the suite accepts
// (control.MaxPCTDepth, which coverage.Run takes too): a depth above the
// steps of a case means nothing, and each level costs memory in every
// run.
const MaxPCTDepth = control.MaxPCTDepth

// Validate reports what Run and Check would refuse in c: an unknown
// property name, a selection that leaves nothing to check or contradicts
// itself, a PCT depth out of range.
func (c *Config) Validate() error {
	_, err := c.selected()
	return err
}

func (c *Config) selected() ([]*Property, error) {
	if c.PCTDepth < 0 || c.PCTDepth > MaxPCTDepth {
		return nil, fmt.Errorf("properties: PCTDepth %d: want 0 to %d", c.PCTDepth, MaxPCTDepth)
	}
	if c.Checks < 0 {
		return nil, fmt.Errorf("properties: Checks %d: want 1 or more (0: the default)", c.Checks)
	}
	if c.Timeout < 0 || c.Idle < 0 || c.ShrinkTime < 0 {
		return nil, fmt.Errorf("properties: Timeout %v, Idle %v, ShrinkTime %v: want 0 (the default) or more", c.Timeout, c.Idle, c.ShrinkTime)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	for _, n := range append(append(append([]string(nil), c.Only...), c.Skip...), c.Cases...) {
		if _, err := Lookup(n); err != nil {
			return nil, err
		}
	}
	for _, n := range c.Skip {
		if slices.Contains(c.Only, n) {
			return nil, fmt.Errorf("properties: %s is both selected (Only) and left out (Skip)", n)
		}
	}
	var out []*Property
	for _, p := range suite {
		if len(c.Only) > 0 && !slices.Contains(c.Only, p.Name) || slices.Contains(c.Skip, p.Name) {
			continue
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		// Nothing checked is not "holds".
		return nil, errors.New("properties: Skip leaves no property to check")
	}
	for _, n := range c.Cases {
		if !slices.ContainsFunc(out, func(p *Property) bool { return p.Name == n }) {
			return nil, fmt.Errorf("properties: Cases names %s, which is not selected (Only, Skip): its cases would check nothing", n)
		}
	}
	return out, nil
}

// withRapid runs fn with rapid's flags set from cfg: its checks, shrink
// time and seed, quiet (no failfile) for Check, the failfile to replay.
func withRapid(cfg *Config, quiet bool, fn func()) {
	// Under -short rapid runs a fifth of its checks, rounding down: a
	// count the caller set (Config.Checks, verify run --checks) would drop
	// to nothing below 5 and every property would "hold" on no case. The
	// caller's count is kept; the default still shrinks, to one case at
	// least.
	checks := cfg.checks()
	if testing.Short() {
		if cfg.Checks > 0 {
			checks *= 5
		} else {
			checks = max(checks, 5)
		}
	}
	set := map[string]string{
		"rapid.checks":     strconv.Itoa(checks),
		"rapid.shrinktime": cfg.shrinkTime().String(),
	}
	if cfg.Seed != 0 {
		set["rapid.seed"] = strconv.FormatUint(cfg.Seed, 10)
	}
	if quiet {
		set["rapid.nofailfile"] = "true"
	}
	if cfg.failfile != "" {
		set["rapid.failfile"] = cfg.failfile
	}
	rapidrun.WithFlags(set, fn)
}

func subtestName(p *Property) string {
	return p.Name + "[" + strings.ReplaceAll(strings.ReplaceAll(p.Protects(), " ", "-"), ":", "") + "]"
}

// applies returns why p cannot be checked on the executors newExecutor
// makes, or "".
func applies(p *Property, newExecutor func() executor.Executor) string {
	if p.Applies == nil {
		return ""
	}
	ex, err := guard.Fresh(newExecutor)
	if err != nil {
		return err.Error()
	}
	defer guard.CloseWithin(ex, probeClose)
	if !p.Applies(ex) {
		return fmt.Sprintf("%s does not apply to %T", p.Name, ex)
	}
	return ""
}

// probeClose bounds how long the suite waits for Close of an executor it
// made only to look at (which abilities it has), before a case.
var probeClose = 10 * time.Second

// probeConstructor makes one executor with newExecutor and closes it, as
// the suite does before its cases: the error says why the constructor or
// its executor's Close cannot be used.
func probeConstructor(newExecutor func() executor.Executor) error {
	ex, err := guard.Fresh(newExecutor)
	if err != nil {
		return err
	}
	if err := guard.CloseWithin(ex, probeClose); err != nil {
		return fmt.Errorf("properties: a fresh executor: %w", err)
	}
	return nil
}

// errInterrupted ends rapid's loop once Config.Context is done.
var errInterrupted = errors.New("properties: interrupted")
