package harness

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control/sched"
)

// Options say how Test runs a test body: which strategy, how many runs,
// where a failing schedule goes. The zero Options work: 100 random runs
// from seed 1, schedules saved under the system's temporary directory.
type Options struct {
	Strategy string // "random" (default), "pct" or "replay"
	Seed     uint64
	Runs     int    // 0: 100, or no bound with a Time
	Depth    int    // PCT's bug depth; 0: 3
	Schedule string // replay: the schedule file
	Out      string // directory for failing schedules; "": DefaultOut()
	Report   string // if set, a JSON line per test is appended to this file
	MaxSteps int
	// Time, if > 0, is the test's time budget: no run starts once it
	// has passed (Budget).
	Time time.Duration
	// Command, if set, is the command line that replays a failure, with
	// %s for the schedule file; it is printed with the failure.
	Command string
}

// Environment variables read by OptionsFromEnv (set by `verify test`).
const (
	EnvStrategy = "EXECSPEC_STRATEGY"
	EnvSeed     = "EXECSPEC_SEED"
	EnvRuns     = "EXECSPEC_RUNS"
	EnvDepth    = "EXECSPEC_DEPTH"
	EnvSchedule = "EXECSPEC_SCHEDULE"
	EnvOut      = "EXECSPEC_OUT"
	EnvReport   = "EXECSPEC_REPORT"
	EnvMaxSteps = "EXECSPEC_MAX_STEPS"
	EnvCommand  = "EXECSPEC_REPLAY_COMMAND"
	EnvTime     = "EXECSPEC_TIME" // a duration, as time.ParseDuration reads it
)

// OptionsFromEnv reads Options from the EXECSPEC_* environment variables.
// A schedule file implies the replay strategy.
func OptionsFromEnv() (Options, error) {
	o := Options{
		Strategy: os.Getenv(EnvStrategy),
		Schedule: os.Getenv(EnvSchedule),
		Out:      os.Getenv(EnvOut),
		Report:   os.Getenv(EnvReport),
		Command:  os.Getenv(EnvCommand),
	}
	num := func(name string, dst *int) error {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%s=%q: expected a count", name, v)
			}
			*dst = n
		}
		return nil
	}
	if err := errors.Join(num(EnvRuns, &o.Runs), num(EnvDepth, &o.Depth), num(EnvMaxSteps, &o.MaxSteps)); err != nil {
		return o, err
	}
	if v := os.Getenv(EnvSeed); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return o, fmt.Errorf("%s=%q: expected a number", EnvSeed, v)
		}
		o.Seed = n
	}
	if v := os.Getenv(EnvTime); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return o, fmt.Errorf("%s=%q: expected a duration such as 10m", EnvTime, v)
		}
		o.Time = d
	}
	if o.Schedule != "" && o.Strategy == "" {
		o.Strategy = "replay"
	}
	return o, nil
}

// plan is what o says a test's runs follow: the strategy, or the schedule
// to replay with its Meta (the process then takes the schedule's mode of
// early timers, rt.ReplayMode). o.Strategy is set to its name.
func (o *Options) plan() (sched.Strategy, *sched.Schedule, Meta, error) {
	switch o.Strategy {
	case "", "random":
		o.Strategy = "random"
		return sched.Random(o.Seed), nil, nil, nil
	case "pct":
		depth := o.Depth
		if depth <= 0 {
			depth = 3
		}
		return sched.NewPCT(depth, 0, o.Seed), nil, nil, nil
	case "replay":
		sc, meta, err := LoadSchedule(o.Schedule)
		if err != nil {
			return nil, nil, nil, err
		}
		rt.ReplayMode(meta)
		return nil, &sc, meta, nil
	}
	return nil, nil, nil, fmt.Errorf("execspec/rt: strategy %q: expected random, pct or replay", o.Strategy)
}

// replayCommand is the command that replays the schedule at path of
// test: o.Command, or go test with the EXECSPEC_SCHEDULE variable.
func replayCommand(o Options, test, path string) string {
	if o.Command != "" {
		return strings.ReplaceAll(o.Command, "%s", path)
	}
	return fmt.Sprintf("%s=%s go test -run '^%s$'", EnvSchedule, path, test)
}
