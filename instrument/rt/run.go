package rt

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/execspec/execspec/instrument/rt/internal/rtlayout"
	"github.com/execspec/execspec/instrument/rt/rtproc"
	"github.com/execspec/execspec/properties/control/sched"
)

// runOnce runs main under control; it must be called on the root
// goroutine of a synctest bubble, whose free workers are pool's.
func runOnce(cfg Config, pool *rtproc.Pool, main func()) (sched.Schedule, error) {
	r := newRun(cfg)
	r.pool = pool
	if !active.CompareAndSwap(nil, r) {
		return sched.Schedule{}, errors.New("execspec/rt: a controlled run is already in progress (tests under control cannot run in parallel)")
	}
	defer active.Store(nil)
	// The choices are recorded in a buffer that the process's runs share
	// (one at a time), so that a run of a thousand choices does not grow
	// its own slice from nothing; the schedule gets a copy.
	r.choices = choiceBuf[:0]
	main, restore := r.withPackages(main)
	stdEnter()
	err := r.coordinate(main)
	restore()
	lastEarly = r.earlyNote()
	choices := slices.Clone(r.choices)
	if len(choices) == 0 {
		choices = nil
	}
	choiceBuf = r.choices[:0]
	sc := sched.Schedule{Choices: choices, Steps: r.steps, Checksum: r.sum}
	if r.legacy {
		sc.Version = 1
	}
	return sc, err
}

// choiceBuf is the choices buffer of the run in progress (runOnce).
var choiceBuf []sched.Choice

// Replay runs body once under the choices of s, like Run, and checks that
// the run followed them and reproduced s's steps and checksum: it returns
// an error wrapping sched.ErrDiverged if not, otherwise the run's own
// error (the failure that s recorded).
func Replay(t *testing.T, s sched.Schedule, body func(t *testing.T)) error {
	t.Helper()
	rp := sched.NewReplay(s)
	got, err := Run(t, Config{Strategy: rp}, body)
	if derr := rp.Check(got); derr != nil {
		return derr
	}
	return err
}

// Run runs body once under control in a synctest bubble of t, with cfg,
// and returns the run's schedule and error: nil, a *HangError (deadlock
// or leak), a *PanicError, or an error wrapping sched.ErrBudget or
// sched.ErrStrategy. A body that fails t fails it as usual. A test that
// makes many runs makes them in a Bubble.
func Run(t *testing.T, cfg Config, body func(t *testing.T)) (s sched.Schedule, err error) {
	t.Helper()
	if err := rtlayout.CheckGo(); err != nil {
		return s, err
	}
	defer watchSettles()()
	synctest.Test(t, func(bt *testing.T) {
		var pool rtproc.Pool
		defer pool.Drain()
		s, err = runOnce(cfg, &pool, func() { body(bt) })
	})
	return s, err
}

// StopRun stops the run in progress with err as its error, when called
// by the run's goroutine 0 (the test's body) while it holds control: it
// then does not return, and the run (Run's, Bubble.Run's) returns err
// with the schedule so far. Called by any other goroutine, or with no
// run in progress, it stops nothing and returns an error that says so.
// A harness stops the run in which a test body asks to make its own runs.
func StopRun(err error) error {
	r, g := current()
	switch {
	case r == nil:
		return errors.New("execspec/rt: no controlled run is in progress")
	case g == nil || g.id != 0:
		return errors.New("execspec/rt: the run can be stopped from the test's own goroutine only")
	}
	r.fail(err)
	panic(abortValue)
}
