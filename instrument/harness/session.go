package harness

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control/sched"
)

// A Session lets a test body make its own controlled runs, one at a time,
// and get each run's failure back as a value: a suite that draws a case
// per run, shrinks a failing case together with its schedule and goes on
// after a finding (the pool suite does) calls Own once and Run for each
// run; t is never failed by a run. Test and TestWith see a body that
// takes ownership and hand it the runs (their --runs, strategy, seed and
// replay file).
//
// Every run of a Session happens in one testing/synctest bubble, the
// session's rt.Bubble, which lives from the first Run (or Do) to Close
// (or the end of the test): state that a package which is not
// instrumented creates lazily and keeps (a context's channel) stays
// usable by the next runs. Do runs code in that bubble outside any run
// (an adapter's probe). Each run, and each Do, starts with the
// initialisation of the instrumented packages run again, so that what a
// package makes at initialisation (pond v2's default pool) belongs to
// the run. Runs use the session's strategy: a random or PCT stream that
// goes on from one run to the next, as TestWith's does; RunWith takes a
// strategy of its own (a shrinker's). Goroutines an earlier run left
// behind (uncontrolled, of package-level state) are let run until they
// block before each run. A Session is used by one goroutine, outside any
// bubble; the caller's clock stays the real one.
type Session struct {
	t        *testing.T
	o        Options
	strategy sched.Strategy
	replay   *sched.Schedule
	meta     Meta
	runs     int
	made     int
	budget   *Budget // Options.Time (budget.go)
	start    time.Time
	out      Outcome
	reported bool
	bubble   *rt.Bubble // where the runs are made
}

// errOwned stops the run in which a test body asked to own its runs.
var errOwned = errors.New("execspec/rt: the test body owns its runs")

// owners are the tests whose bodies TestWith calls outside a bubble to
// make their own runs, with the Options they were given.
var owners sync.Map // *testing.T -> Options

// Own returns the Session of t, from which the test body makes its own
// controlled runs. Called from a run that Test or TestWith makes, it stops
// that run (without a failure) and TestWith calls the body again, outside
// any bubble, where Own returns the Session with TestWith's Options.
// Called outside a run, it returns a Session with the Options of the
// environment (OptionsFromEnv). The Session writes the test's Outcome to
// Options.Report when t's test ends.
func Own(t *testing.T) (*Session, error) {
	t.Helper()
	if rt.InRun() {
		if err := rt.StopRun(errOwned); err != nil {
			return nil, errors.New("execspec/rt: Own is called from the test's own goroutine")
		}
	}
	var o Options
	if v, ok := owners.Load(t); ok {
		o = v.(Options)
	} else {
		var err error
		if o, err = OptionsFromEnv(); err != nil {
			return nil, err
		}
	}
	return NewSession(t, o)
}

// NewSession returns a Session of t with explicit Options.
func NewSession(t *testing.T, o Options) (*Session, error) {
	b, err := rt.NewBubble(t)
	if err != nil {
		return nil, err
	}
	s := &Session{t: t, o: o, runs: o.runs(), start: time.Now(), budget: NewBudget(o.Time), bubble: b}
	s.strategy, s.replay, s.meta, err = s.o.plan()
	if err != nil {
		return nil, err
	}
	if s.replay != nil {
		s.runs = 1
	}
	s.out = Outcome{Test: t.Name(), Strategy: s.o.Strategy}
	t.Cleanup(func() { _ = s.Close() })
	return s, nil
}

// Runs is the number of runs the session was asked for (Options.Runs;
// 1 when replaying; no bound with Options.Time alone: see Spent).
func (s *Session) Runs() int { return s.runs }

// Made is the number of runs made so far (shrinking and replays included).
func (s *Session) Made() int { return s.made }

// Seed is the seed of the session's strategy.
func (s *Session) Seed() uint64 { return s.o.Seed }

// Strategy names the session's strategy: random, pct or replay.
func (s *Session) Strategy() string { return s.o.Strategy }

// Replaying returns the schedule to replay and the Meta saved with it,
// when the session replays a file (Options.Schedule).
func (s *Session) Replaying() (sched.Schedule, Meta, bool) {
	if s.replay == nil {
		return sched.Schedule{}, nil, false
	}
	return *s.replay, s.meta, true
}

// Run makes one controlled run of main with the session's strategy (in
// a replay: the replayed schedule, checked as Replay checks it) and
// returns its schedule and its failure: nil, a *HangError, a
// *PanicError, or an error wrapping sched.ErrBudget, ErrStrategy or
// ErrDiverged. main runs as the run's goroutine 0 and must not fail a
// testing.T; the test is not failed.
func (s *Session) Run(main func()) (sched.Schedule, error) {
	if s.replay != nil {
		return s.Replay(*s.replay, main)
	}
	return s.RunWith(rt.Config{Strategy: s.strategy, Seed: s.o.Seed + uint64(s.made)}, main)
}

// RunWith is Run with a Config of the caller's (a shrinker's strategy).
// Options.MaxSteps applies where cfg sets none.
func (s *Session) RunWith(cfg rt.Config, main func()) (sc sched.Schedule, err error) {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = s.o.MaxSteps
	}
	s.made++
	s.out.Runs = s.made
	sc, err = s.bubble.Run(cfg, func(*testing.T) { main() })
	s.out.TotalSteps += sc.Steps
	if s.out.FailedRun == 0 {
		s.out.Steps = sc.Steps
		s.out.Checksum = fmt.Sprintf("%016x", sc.Checksum)
	}
	return sc, err
}

// Replay runs main under the choices of want and checks that the run
// made them and reproduced want's steps and checksum: it returns an
// error wrapping sched.ErrDiverged if not, otherwise the run's own
// failure.
func (s *Session) Replay(want sched.Schedule, main func()) (sched.Schedule, error) {
	rp := sched.NewReplay(want)
	got, err := s.RunWith(rt.Config{Strategy: rp}, main)
	if derr := rp.Check(got); derr != nil {
		return got, derr
	}
	if s.replay != nil {
		s.out.Replayed = true
	}
	return got, err
}

// Failed records a failing run in the test's Outcome (the first one
// recorded gives FailedRun, Kind, Error, Schedule, Steps and Checksum):
// run is the 1-based run of the search that found it, err the failure (a
// run's error, or the suite's own finding, which may wrap one; else kind
// "fail"), path where sc was saved ("" if it was not).
func (s *Session) Failed(run int, err error, path string, sc sched.Schedule) {
	if s.out.FailedRun != 0 {
		return
	}
	s.out.FailedRun = max(run, 1)
	s.out.Kind = kind(err)
	if s.out.Kind == "error" {
		s.out.Kind = "fail"
	}
	if err != nil {
		s.out.Error = err.Error()
	}
	s.out.Schedule = path
	s.out.Steps = sc.Steps
	s.out.Checksum = fmt.Sprintf("%016x", sc.Checksum)
}

// Path is where Save puts the schedule of a finding called name (a test
// may save several, one per distinct cause): in Options.Out (or
// DefaultOut), named for the test and name.
func (s *Session) Path(name string) string {
	test := s.t.Name()
	if name != "" {
		test += "." + name
	}
	return SchedulePath(s.o.Out, test)
}

// ReplayCommand is the command that replays the schedule at path: the
// Options' Command, or go test with the EXECSPEC_SCHEDULE variable.
func (s *Session) ReplayCommand(path string) string {
	return replayCommand(s.o, s.t.Name(), path)
}

// Do runs f in the session's bubble, on no controlled goroutine: what
// f starts runs uncontrolled, and what it creates belongs to the bubble
// the runs share (rt.Bubble.Do). A panic of f is returned as an error.
func (s *Session) Do(f func()) error { return s.bubble.Do(f) }

// Close writes the test's Outcome and ends the session's bubble: it
// waits for the goroutines left in it, as synctest.Test does, and
// returns what synctest said if some were left blocked for good (they
// stay so; the runs' verdicts stand). The test's cleanup calls it if the
// body did not.
func (s *Session) Close() error {
	s.report()
	return s.bubble.Close()
}

func (s *Session) report() {
	if s.reported || s.o.Report == "" {
		return
	}
	s.reported = true
	s.out.Seconds = time.Since(s.start).Seconds()
	writeOutcome(s.t, s.o.Report, s.out)
}
