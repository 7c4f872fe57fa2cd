package onengine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/instrument/harness"
	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/internal/guard"
)

// Settings is what a run of the property suite takes from verify test
// when its cases run on the engine (On).
type Settings struct {
	On       bool      // cases run as rt runs
	Failfile string    // a rapid failfile to replay (verify test --replay)
	Command  string    // verify test's replay command, with %s for the failfile
	Strategy string    // verify test's --strategy, for the report
	Report   string    // where verify test reads the outcome of each test
	Checksum string    // a replay's: the failing run's checksum it must reproduce
	End      time.Time // verify test --time: when the test's budget is spent
}

// Knobs are the suite's settings that verify test fills in where the
// suite left them 0 (--runs, --time, --strategy pct, --seed), or sets
// for a replay (one case, the PCT depth the failfile's note says).
type Knobs struct {
	Checks, PCTDepth int
	Seed             uint64
}

// Use decides whether the cases of newExecutor run on the engine: under
// verify test, for an executor that is not executor.Controllable or whose
// hook is not to be used (noHook). A fresh executor it looks at is closed
// within probeClose. An executor whose goroutines turn out not to be
// controlled (its package left out of --instrument) is an error, as is a
// call from inside a controlled run.
func Use(t *testing.T, newExecutor func() executor.Executor, noHook bool, probeClose time.Duration, k *Knobs) (Settings, error) {
	if !Active() {
		return Settings{}, nil
	}
	ex, err := guard.Fresh(newExecutor)
	if err != nil {
		return Settings{}, err
	}
	_, controllable := ex.(executor.Controllable)
	_ = guard.CloseWithin(ex, probeClose)
	if controllable && !noHook {
		return Settings{}, nil
	}
	if rt.InRun() {
		return Settings{}, errors.New("properties: Run is inside a controlled run of the instrumented engine; it makes one run per case itself: mark the test with a line //execspec:nocontrol in its doc comment")
	}
	o, err := harness.OptionsFromEnv()
	if err != nil {
		return Settings{}, err
	}
	s := Settings{On: true, Command: o.Command, Strategy: o.Strategy, Report: o.Report}
	if o.Runs > 0 && k.Checks == 0 {
		k.Checks = o.Runs
	}
	if o.Time > 0 && o.Schedule == "" {
		s.End = time.Now().Add(o.Time)
		if k.Checks == 0 {
			k.Checks = Unbounded
		}
	}
	if o.Strategy == "pct" && k.PCTDepth == 0 {
		k.PCTDepth = max(o.Depth, 1)
	}
	if o.Seed != 0 && k.Seed == 0 {
		k.Seed = o.Seed
	}
	if o.Schedule != "" {
		if !strings.HasSuffix(o.Schedule, ".fail") {
			return Settings{}, fmt.Errorf("properties: %s is not a rapid failfile: the suite replays a failure from the failfile it printed", o.Schedule)
		}
		s.Failfile = o.Schedule
		k.Checks = 1 // the failfile's case, then one more
		n, err := ReadNote(o.Schedule)
		if err != nil {
			return Settings{}, err
		}
		k.PCTDepth = n.PCTDepth
		s.Checksum = n.Checksum
	}
	if !ControlsGoroutines(t, newExecutor) {
		return Settings{}, fmt.Errorf("properties: under verify test, but %T started no controlled goroutine: its package is not instrumented (name it with --instrument), or it runs its tasks on the caller's goroutine; run it with go test for a black-box check", ex)
	}
	return s, nil
}
