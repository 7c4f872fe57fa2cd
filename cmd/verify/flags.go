package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/properties"
)

// flagSpec is the documented range of one numeric flag, and where it
// applies. Every subcommand declares its flags' specs in one table and
// checks them with checkFlags after parsing, so that a value outside the
// range is refused with the range named, never replaced by a default or
// clamped, and a flag given where it has no effect is refused with the
// reason, never ignored.
type flagSpec struct {
	name     string
	min, max int64 // the range, inclusive; a duration's in nanoseconds
	// applies, when not nil, says why the flag has no effect with the
	// other flags given ("" when it has one). It is asked only when the
	// flag was given on the command line.
	applies func() string
	// only restricts the flag to an explicit value: set, it must be given
	// explicitly or not at all (a default may lie outside min..max, such
	// as 0 meaning "the policy's default").
	explicitOnly bool
}

// validateFlags checks the flags of fs against specs. It returns every
// problem at once, joined, each naming the flag, its value and the range.
func validateFlags(fs *flag.FlagSet, specs []flagSpec) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	for _, s := range specs {
		f := fs.Lookup(s.name)
		if f == nil {
			panic("verify: flag spec for an undeclared flag --" + s.name)
		}
		if given[s.name] && s.applies != nil {
			if why := s.applies(); why != "" {
				errs = append(errs, fmt.Errorf("--%s does not apply: %s", s.name, why))
				continue
			}
		}
		if s.explicitOnly && !given[s.name] {
			continue
		}
		if s.min == 0 && s.max == 0 {
			continue // a flag with a spec for where it applies only
		}
		var v int64
		isDur := false
		switch x := f.Value.(flag.Getter).Get().(type) {
		case int:
			v = int64(x)
		case int64:
			v = x
		case uint64:
			v = int64(min(x, math.MaxInt64))
		case time.Duration:
			v, isDur = int64(x), true
		default:
			continue
		}
		if v < s.min || v > s.max {
			errs = append(errs, fmt.Errorf("--%s %s: want %s", s.name, f.Value.String(), rangeText(s.min, s.max, isDur)))
		}
	}
	return errors.Join(errs...)
}

func rangeText(lo, hi int64, dur bool) string {
	show := func(v int64) string {
		if dur {
			return time.Duration(v).String()
		}
		return fmt.Sprint(v)
	}
	if hi == math.MaxInt64 {
		if lo == 0 {
			return "0 or more"
		}
		return show(lo) + " or more"
	}
	return show(lo) + " to " + show(hi)
}

// onlyWith returns an applies function: the flag has an effect only when
// cond holds, which what describes.
func onlyWith(cond func() bool, what string) func() string {
	return func() string {
		if cond() {
			return ""
		}
		return "it has an effect only " + what
	}
}

// Bounds of flags that size work or memory. Each is far above any useful
// value and far below what would exhaust a machine.
const (
	maxLast     = 10_000                 // check --last: events listed before a violation
	maxChecks   = 10_000_000             // run --checks: cases per property
	maxPCTDepth = properties.MaxPCTDepth // run --pct, cover --pct-depth: a PCT depth above the steps of a case means nothing
	maxParallel = 1024                   // model --parallel: exploring goroutines
	maxSwarm    = 1 << 16                // model --swarm I/N and merge: members of a swarm (each one process)
	maxRuns     = 1 << 40                // cover --runs
	maxPreempt  = 1000                   // cover --preemptions: far beyond any search that ends
	maxDuration = int64(1000 * time.Hour)
)

// modelFlagSpecs is the table of verify model's numeric flags.
func modelFlagSpecs(f *modelFlags) []flagSpec {
	policyIs := func(p model.Policy) func() bool { return func() bool { return model.Policy(f.policy) == p } }
	ws := onlyWith(policyIs(model.WorkSteal), "with --policy worksteal")
	prio := onlyWith(policyIs(model.Priority), "with --policy priority")
	bitstate := onlyWith(func() bool { return f.scale.bitstateMB != 0 || f.scale.swarm != "" }, "with a bitstate search (--bitstate MB or --swarm I/N)")
	return []flagSpec{
		{name: "workers", min: 1, max: model.MaxWorkers},
		{name: "tasks", min: 1, max: model.MaxTasks},
		{name: "pendings", min: 0, max: 15},
		{name: "wakes", min: 1, max: 15},
		{name: "local-cap", min: 1, max: 15, applies: ws},
		{name: "owner-fifo", applies: ws},
		{name: "steal-half", applies: ws},
		{name: "global-interval", min: 0, max: 255, applies: ws},
		{name: "priorities", applies: prio},
		{name: "aging", min: 1, max: 255, explicitOnly: true, applies: func() string {
			if why := prio(); why != "" {
				return why
			}
			if model.Variant(f.variant) == model.NoAging {
				return "--variant no-aging has no aging"
			}
			return ""
		}},
		{name: "slice", min: 1, max: 255, explicitOnly: true, applies: onlyWith(policyIs(model.TimeSlice), "with --policy timeslice")},
		{name: "retries", min: 1, max: 15, explicitOnly: true, applies: onlyWith(policyIs(model.Retry), "with --policy retry")},
		{name: "failures", min: 1, max: 15, explicitOnly: true, applies: onlyWith(policyIs(model.Retry), "with --policy retry")},
		{name: "max-states", min: 0, max: math.MaxInt64},
		{name: "max-memory", min: 0, max: 1 << 30},
		{name: "timeout", min: 0, max: maxDuration},
		{name: "parallel", min: 0, max: maxParallel},
		{name: "seed", applies: bitstate},
		{name: "hashes", min: 1, max: 16, applies: bitstate},
		{name: "symmetry", applies: onlyWith(func() bool { return f.property == "safety" || f.property == "all" }, "with --property safety (or all, where it reduces the safety check)")},
	}
}

// checkModelFlags checks verify model's flags: ranges, where each applies,
// and that the property asked for can say something about the model.
func checkModelFlags(fs *flag.FlagSet, f *modelFlags) error {
	err := validateFlags(fs, modelFlagSpecs(f))
	if f.property == "fairness" && !f.cfg.Endless {
		err = errors.Join(err, errors.New("--property fairness needs --endless: without endless futures every fair run ends, so fairness (□◇ready ⇒ □◇polled) would hold vacuously"))
	}
	return err
}

// runFlagSpecs is the table of verify run's numeric flags.
func runFlagSpecs(f *runFlags) []flagSpec {
	return []flagSpec{
		{name: "checks", min: 1, max: maxChecks},
		{name: "pct", min: 0, max: maxPCTDepth, applies: onlyWith(func() bool { return !f.uncontrolled }, "on controlled interleavings (not with --uncontrolled)")},
		{name: "shrink-time", min: 0, max: maxDuration},
	}
}

// coverFlagSpecs is the table of verify cover's flags. A zero that the
// library would read as "the default" (--pendings 0, --runs 0, --time 0)
// is refused, not replaced.
func coverFlagSpecs(f *coverFlags) []flagSpec {
	strategy := func(names ...string) func() bool {
		return func() bool {
			for _, n := range names {
				if f.strategy == n {
					return true
				}
			}
			return false
		}
	}
	return []flagSpec{
		{name: "workers", min: 1, max: model.MaxWorkers, applies: func() string {
			if f.executor == "fifo" && f.workers != 1 {
				return "--executor fifo has one worker"
			}
			return ""
		}},
		{name: "tasks", min: 1, max: model.MaxTasks},
		{name: "pendings", min: 1, max: 15},
		{name: "wakes", min: 1, max: 15},
		{name: "local-cap", min: 1, max: 15, applies: onlyWith(func() bool {
			return f.executor == "worksteal" || f.executor == "deep" || strings.HasPrefix(f.executor, "deep/")
		}, "with an executor of local queues (--executor worksteal or deep)")},
		{name: "pct-depth", min: 1, max: maxPCTDepth, applies: onlyWith(strategy("pct"), "with --strategy pct")},
		{name: "preemptions", min: 0, max: maxPreempt, applies: onlyWith(strategy("exhaustive", "dfs"), "with --strategy exhaustive or dfs")},
		{name: "time", min: int64(time.Millisecond), max: maxDuration, explicitOnly: true},
		{name: "runs", min: 1, max: maxRuns, explicitOnly: true},
	}
}

// checkCoverFlags checks verify cover's flags: the table, and --goal, a
// percentage (a float the table does not read).
func checkCoverFlags(fs *flag.FlagSet, f *coverFlags) error {
	err := validateFlags(fs, coverFlagSpecs(f))
	if !(f.goal >= 0 && f.goal <= 100) { // NaN fails both
		err = errors.Join(err, fmt.Errorf("--goal %v: want a percentage, 0 to 100", f.goal))
	}
	return err
}

// replayFlagSpecs is the table of verify replay's numeric flags.
func replayFlagSpecs() []flagSpec {
	return []flagSpec{{name: "from", min: 1, max: math.MaxInt64}}
}

// checkFlagSpecs is the table of verify check's numeric flags.
func checkFlagSpecs(f *checkFlags) []flagSpec {
	lin := onlyWith(func() bool { return f.lin }, "with --linearizability")
	return []flagSpec{
		{name: "last", min: 0, max: maxLast},
		{name: "lin-budget", min: int64(time.Millisecond), max: maxDuration, applies: lin},
		{name: "lin-html", applies: lin},
		{name: "stuck-after", min: 1, max: maxDuration, applies: onlyWith(func() bool { return f.goTrace }, "with --go-trace")},
		{name: "linearizability", applies: onlyWith(func() bool { return !f.goTrace }, "on an execspec trace (not with --go-trace)")},
	}
}

// flagError prints a flag error of subcommand cmd and returns exitUsage.
func flagError(stderr interface{ Write([]byte) (int, error) }, cmd string, err error) int {
	for _, l := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(stderr, "verify %s: %s\n", cmd, l)
	}
	fmt.Fprintf(stderr, "(see %s %s -h)\n", selfCommand(), cmd)
	return exitUsage
}

// newFlagSet returns the flag set of a subcommand, writing to stderr, whose
// -h prints in the layout every subcommand shares: help (the usage line,
// what the command does, examples), the flags, then exits (the exit codes;
// "" for none).
func newFlagSet(name string, stderr io.Writer, help, exits string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, help)
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
		if exits != "" {
			fmt.Fprint(stderr, "\n", exits)
		}
	}
	return fs
}
