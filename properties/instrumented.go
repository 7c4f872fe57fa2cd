package properties

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/instrument/harness"
	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/properties/internal/guard"
	"github.com/execspec/execspec/properties/internal/onengine"
	"github.com/execspec/execspec/properties/internal/rapidrun"
)

// The instrumented engine. An executor that does not pass its yield points
// through executor.Scheduler (it is not executor.Controllable, or
// Config.NoHook leaves its hook unused) is still run under control when
// its package is instrumented: `verify test ./pkg --instrument PATTERN`
// rewrites its go statements, channel operations, selects, locks and
// atomics into calls of instrument/rt, and runs the test binary with the
// EXECSPEC_* environment. Run sees that environment and runs each case as
// one controlled run of the runtime (rt.Run: a testing/synctest bubble of
// its own, one goroutine at a time):
//
//	on the Controller (the hook)          on the instrumented engine
//	the executor's Yield and Block        its goroutines, channels, locks and
//	  calls are the yield points            atomics are the yield points
//	the workload's goroutines: ctl.Go     the workload's goroutines: rt.Go,
//	  and ctl.Block                         rt.Block (rt.Scheduler)
//	a choice drawn from rapid             the same: a choice drawn from rapid
//	  (RapidChooser, RapidPCT)              (a select's case too), so the
//	                                        schedule shrinks with the workload
//	a hang: every goroutine blocked       a hang: every goroutine blocked
//	  (DeadlockError)                       and no timer pending (rt's
//	                                        deadlock or leak, with stacks)
//	replay: rapid's failfile              replay: rapid's failfile, through
//	                                        verify test --replay FILE; a note
//	                                        beside it keeps the strategy and
//	                                        the failing run's checksum, which
//	                                        the replay must reproduce
//
// The case's executor is made inside the run, so that the goroutines it
// starts are the run's. The test that calls Run must not itself be
// wrapped in a controlled run: mark it with the line
//
//	//execspec:nocontrol
//
// in its doc comment (Run owns the runs, one per case, and says so if it
// finds itself inside one). Whether the executor's package was
// instrumented is found out, not assumed: before the cases, one task is
// run under the engine, and an executor whose goroutines did not become
// controlled (its package was left out of --instrument) fails the test
// at once with a message saying so, rather than pass as a black box
// under a command that promised control.
//
// Under the engine, -properties.checks gives way to verify test's --runs
// (EXECSPEC_RUNS: cases per property), --strategy pct to Config.PCTDepth
// (EXECSPEC_DEPTH), --seed to rapid's seed, and --replay FILE with a
// rapid failfile replays that failure.

// UnderEngine reports whether the process runs under the instrumented
// engine: a test binary that `verify test` built and started (its
// EXECSPEC_* environment is set).
func UnderEngine() bool { return onengine.Active() }

// engine is what Run found out about running on the instrumented engine.
type engine struct {
	onengine.Settings
	cfg    *Config
	budget *harness.Budget // the share of verify test's --time of the property under way
}

// instrumentedPCTSteps is PCT's k on the engine, the steps within which
// its change points are drawn (a case is one run: nothing to learn k
// from); a longer case has them all in its first 2,000 steps.
const instrumentedPCTSteps = 2000

// useEngine decides whether the cases of newExecutor run on the
// instrumented engine, and applies verify test's settings to cfg.
func useEngine(t *testing.T, newExecutor func() executor.Executor, cfg *Config) (engine, error) {
	if cfg.Uncontrolled {
		return engine{}, nil
	}
	k := onengine.Knobs{Checks: cfg.Checks, PCTDepth: cfg.PCTDepth, Seed: cfg.Seed}
	s, err := onengine.Use(t, newExecutor, cfg.NoHook, probeClose, &k)
	if err != nil || !s.On {
		return engine{}, err
	}
	cfg.Checks, cfg.PCTDepth, cfg.Seed = k.Checks, k.PCTDepth, k.Seed
	return engine{Settings: s, cfg: cfg}, nil
}

// instrumentedCase runs w on a fresh executor as one controlled run of
// the engine, its choices drawn from t.
func (rn *runner) instrumentedCase(t *rapid.T, w *Workload) *Observation {
	cfg := rn.cfg
	var s control.Strategy = control.RapidChooser(t)
	if cfg.PCTDepth > 0 {
		p := control.RapidPCT(t, cfg.PCTDepth, instrumentedPCTSteps)
		p.Begin() // draws its change points here, on the test's goroutine
		s = p
	}
	st := rapidrun.NewStrategy(s, t)
	var r *caseRun
	var o *Observation
	var ferr error
	start := time.Now()
	sch, err := rt.Run(rn.t, rt.Config{Strategy: st, MaxSteps: onengine.Steps}, func(*testing.T) {
		ex, err := guard.Fresh(rn.newExecutor)
		if err != nil {
			ferr = err
			return
		}
		r = startCase(ex, w, cfg, rt.Scheduler())
		o = r.newObservation(cfg)
		r.drive()
	})
	if v, ok := st.Panicked(); ok {
		// A rapid draw ran out of data (shrinking) or failed: rapid
		// expects its panic on the test's goroutine.
		panic(v)
	}
	if ferr != nil {
		t.Fatalf("%v", ferr)
	}
	if r == nil {
		t.Fatalf("properties: the controlled run did not start the case: %v", err)
	}
	if o == nil {
		o = r.newObservation(cfg)
	}
	o.Checksum, o.Decisions = sch.Checksum, len(sch.Choices)
	o.Instrumented = true
	return r.endControlled(o, err, start)
}

// The time budget on the engine (verify test --time, EXECSPEC_TIME): the
// properties of the test share it, each taking an equal part of what is
// left when it starts (a property that does not apply leaves its part to
// the next ones). A property whose part is spent before it found anything
// stops its rapid loop at the next case and holds on the cases it ran;
// one that found a failure shrinks it as usual (-rapid.shrinktime). With
// --time alone the cases are not bounded (onengine.Unbounded).

// errTimeUp ends a property's rapid loop once its share of the budget is
// spent; rapid takes it for a failing case, which property turns back
// into a pass (Result.TimeUp).
var errTimeUp = errors.New("properties: the time budget is spent")

// share gives the property about to start (the first of left; cases, if
// set, selects among them as Config.Cases does) its part of the budget.
func (e *engine) share(left []*Property, cases []string) {
	if !e.On || e.End.IsZero() {
		return
	}
	n := 0
	for _, p := range left {
		if len(cases) == 0 || slices.Contains(cases, p.Name) {
			n++
		}
	}
	e.budget = harness.NewBudget(max(time.Until(e.End)/time.Duration(max(n, 1)), time.Millisecond))
}

// timeUp is called before each case of a property: once the property's
// share is spent, and it has found nothing (failed), it ends the rapid
// loop. It logs the property's progress when due (harness.Budget).
func (rn *runner) timeUp(res *Result, failed bool) {
	if failed || !rn.eng.budget.Spent(rn.t, res.Runs) {
		return
	}
	res.TimeUp = true
	// rapid saves a failfile for a failing case; this one is not a
	// failure (rapidrun.WithFlags restores the flag).
	if f := flag.Lookup("rapid.nofailfile"); f != nil {
		_ = f.Value.Set("true")
	}
	panic(errTimeUp)
}

// replay is the command that replays a failure found on the engine:
// verify test's own, with the failfile and the subtest.
func (e engine) replay(run, failfile string) string { return onengine.Replay(e.Command, run, failfile) }

// line is the line Run logs about the engine, "" if it is not used.
func (e engine) line(checks int) string {
	if !e.On {
		return ""
	}
	return "cases run on the instrumented engine (instrument/rt): " + strconv.Itoa(checks) + " per property, one controlled run each"
}

// record appends the outcome of property res to verify test's report (a
// JSON line, as harness.Test writes one per test): the cases it ran, and the
// case that failed. The failure's own replay command is in the test's
// log (the Summary), which verify test prints with it.
func (e engine) record(test string, res *Result) error {
	if !e.On || e.Report == "" || res.Skipped != "" {
		return nil
	}
	out := harness.Outcome{Test: test, Strategy: e.Strategy, Runs: res.Runs, Seconds: res.Duration.Seconds(), TimeUp: res.TimeUp}
	if res.Verdict == checker.Violated {
		// The case that first failed (res.Cases stops counting there;
		// res.Runs goes on through the shrinking).
		out.FailedRun, out.Kind, out.Error = max(res.Cases, 1), "fail", res.Caught+": "+res.Message
		if res.Observation != nil {
			out.Checksum = fmt.Sprintf("%016x", res.Observation.Checksum)
		}
		// A replay that failed the same way in a run with the recorded
		// checksum made the same choices (verify test says so).
		out.Replayed = e.Failfile != "" && e.Checksum != "" && out.Checksum == e.Checksum
	}
	return onengine.Record(e.Report, out)
}

// writeNote writes the engine's note beside failfile: the strategy of
// the failing case (cfg.PCTDepth) and the checksum of its run o.
func (e engine) writeNote(failfile string, o *Observation) error {
	n := onengine.Note{PCTDepth: e.cfg.PCTDepth}
	if o != nil {
		n.Checksum = fmt.Sprintf("%016x", o.Checksum)
	}
	return onengine.WriteNote(failfile, n)
}
