package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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

// Outcome is the record of one test under control, written as a JSON
// line to Options.Report.
type Outcome struct {
	Test      string  `json:"test"`
	Strategy  string  `json:"strategy"`
	Runs      int     `json:"runs"`                 // runs made (the failing one included)
	FailedRun int     `json:"failed_run,omitempty"` // 1-based; 0: none failed
	Kind      string  `json:"kind,omitempty"`       // deadlock, leak, panic, fail, budget, diverged, os.Exit
	Error     string  `json:"error,omitempty"`
	Schedule  string  `json:"schedule,omitempty"`
	Steps     int     `json:"steps"`
	Checksum  string  `json:"checksum,omitempty"`
	Replayed  bool    `json:"replayed,omitempty"` // a replay matched its schedule's checksum
	Seconds   float64 `json:"seconds"`            // wall-clock time of the runs
	TimeUp    bool    `json:"time_up,omitempty"`  // the runs stopped because Options.Time was spent
	// Early, for a failed run that let virtual time pass while a
	// goroutine could run (early timers), says how much and while which
	// goroutines, in one line.
	Early string `json:"early,omitempty"`

	// TotalSteps counts the yield points of every run made (a Session's).
	TotalSteps int `json:"total_steps,omitempty"`
}

// ReadReport reads the Outcomes of a report file (Options.Report), one
// JSON line each. A line that is not an Outcome is an error that names
// the file and the line; the Outcomes before it are returned with it.
func ReadReport(path string) ([]Outcome, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var outs []Outcome
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var o Outcome
		if err := json.Unmarshal(line, &o); err != nil || o.Test == "" {
			return outs, fmt.Errorf("%s:%d: expected an outcome of a test as JSON: %q", path, i+1, line)
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// KindExit is the Outcome.Kind of a test that called os.Exit.
const KindExit = "os.Exit"

// Test runs body under control with the Options of the environment
// (OptionsFromEnv): each run in its own synctest bubble, one goroutine at
// a time. The first failing run (a deadlock, a leak, a panic, a failed
// t) fails t, saves its schedule and says how to replay it. This is what
// the rewriter makes of each TestXxx function of a package under test.
func Test(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	o, err := OptionsFromEnv()
	if err != nil {
		t.Fatalf("execspec/rt: %v", err)
	}
	TestWith(t, o, body)
}

// TestWith is Test with explicit Options.
func TestWith(t *testing.T, o Options, body func(t *testing.T)) {
	t.Helper()
	runs := o.runs()
	strategy, replay, _, err := o.plan()
	if err != nil {
		t.Fatal(err)
	}
	if replay != nil {
		runs = 1
	}
	out := Outcome{Test: t.Name(), Strategy: o.Strategy}
	start := time.Now()
	owned := false // the body makes its own runs (Own): its Session reports
	defer func() {
		out.Seconds = time.Since(start).Seconds()
		if o.Report != "" && !owned {
			writeOutcome(t, o.Report, out)
		}
	}()
	budget := NewBudget(o.Time)
	for i := range runs {
		if budget.Spent(t, i) {
			out.TimeUp = true
			break
		}
		out.Runs = i + 1
		// Each run has a bubble of its own, ended before the next.
		b, err := rt.NewBubble(t)
		if err != nil {
			t.Fatal(err)
		}
		failed, ownedNow := testRun(t, b, o, i, runs, strategy, replay, body, &out)
		if err := b.Close(); err != nil {
			t.Log(err)
		}
		if ownedNow {
			// The body asked to own its runs (Own): it is called again,
			// outside any bubble, and makes them through its Session.
			owned = true
			owners.Store(t, o)
			defer owners.Delete(t)
			body(t)
			return
		}
		if failed {
			return
		}
	}
}

// testRun makes run i of TestWith's runs in b (a replay of replay when
// it is not nil, else with strategy) and reports a failure on the
// bubble's test, as the body's own failures are: it records the run in
// out and says whether it failed, or whether the body asked to own its
// runs.
func testRun(t *testing.T, b *rt.Bubble, o Options, i, runs int, strategy sched.Strategy, replay *sched.Schedule, body func(t *testing.T), out *Outcome) (failed, owned bool) {
	var rp *sched.Replay
	if replay != nil {
		rp = sched.NewReplay(*replay)
		strategy = rp
	}
	var bt *testing.T
	s, err := b.Run(rt.Config{Strategy: strategy, MaxSteps: o.MaxSteps, Seed: o.Seed + uint64(i)}, func(t *testing.T) {
		bt = t
		body(t)
	})
	if errors.Is(err, errOwned) {
		return false, true
	}
	out.Steps = s.Steps
	out.Checksum = fmt.Sprintf("%016x", s.Checksum)
	if rp != nil {
		if derr := rp.Check(s); derr != nil {
			err = derr
		} else {
			out.Replayed = true
		}
	}
	if bt == nil {
		bt = t // the run never reached the body
	}
	bt.Helper()
	if err == nil && !bt.Failed() {
		return false, false
	}
	out.FailedRun = i + 1
	out.Kind = kind(err)
	out.Early = b.EarlyNote()
	if err != nil {
		out.Error = err.Error()
	} else {
		out.Error = "the test failed"
	}
	if rp == nil && !errors.Is(err, sched.ErrBudget) {
		path := SchedulePath(o.Out, t.Name())
		if serr := SaveSchedule(path, s, nil); serr != nil {
			bt.Errorf("execspec/rt: %v", serr)
		} else {
			out.Schedule = path
		}
	}
	if err != nil {
		bt.Errorf("run %d of %d (%s, seed %d): %v", i+1, runs, o.Strategy, o.Seed, err)
	} else {
		bt.Errorf("run %d of %d (%s, seed %d) failed", i+1, runs, o.Strategy, o.Seed)
	}
	if out.Early != "" {
		bt.Log(out.Early)
	}
	if out.Schedule != "" {
		bt.Errorf("schedule saved; replay it with:\n\t%s", replayCommand(o, t.Name(), out.Schedule))
	}
	return true, false
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

func kind(err error) string {
	var p *rt.PanicError
	switch {
	case err == nil:
		return "fail"
	case errors.Is(err, rt.ErrLeak):
		return "leak"
	case errors.Is(err, rt.ErrDeadlock):
		return "deadlock"
	case errors.As(err, &p):
		if s, ok := p.Value.(string); ok && strings.HasPrefix(s, "unexpected call to os.Exit") {
			return KindExit
		}
		return "panic"
	case errors.Is(err, sched.ErrBudget):
		return "budget"
	case errors.Is(err, sched.ErrDiverged):
		return "diverged"
	}
	return "error"
}

// DefaultOut is where the schedules of failing runs go when Options.Out
// is empty: execspec/schedules in the user's cache directory (beside the
// other files verify keeps), or in the temporary directory where there is
// none.
func DefaultOut() string {
	if base, err := os.UserCacheDir(); err == nil {
		return filepath.Join(base, "execspec", "schedules")
	}
	return filepath.Join(os.TempDir(), "execspec-schedules")
}

// SchedulePath is the file the schedule of a failing run of test is saved
// to in dir ("": DefaultOut()).
func SchedulePath(dir, test string) string {
	if dir == "" {
		dir = DefaultOut()
	}
	return filepath.Join(dir, filepath.Base(sched.TestdataPath(test)))
}

func writeOutcome(t *testing.T, path string, out Outcome) {
	b, _ := json.Marshal(out)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Errorf("execspec/rt: writing the report: %v", err)
	}
}
