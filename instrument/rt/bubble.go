package rt

import (
	"errors"
	"fmt"
	"runtime/debug"
	"testing"
	"testing/synctest"

	"github.com/execspec/execspec/instrument/rt/internal/rtlayout"
	"github.com/execspec/execspec/instrument/rt/rtproc"
	"github.com/execspec/execspec/properties/control/sched"
)

// A Bubble is a testing/synctest bubble of a test in which controlled
// runs are made one at a time, asked for from outside it: the test's
// goroutine keeps the real clock and its own pace (a benchmark's timer,
// a suite's shrinker), each run happens on the bubble's root goroutine.
// The bubble lives from the first Run (or Do) to Close: state that a
// package which is not instrumented creates lazily and keeps (a
// context's channel) is created in the bubble and stays usable by the
// next runs, where a bubble per run would make its use by a later run a
// fatal error. Instrumented packages start each run afresh (pkginit.go).
// Goroutines an earlier run left behind (uncontrolled, of package-level
// state) are let run until they block before each run and each Do.
//
// A Bubble is used by one goroutine, outside any bubble; the settle
// watchdog (settlewatch.go) watches it while it lives.
type Bubble struct {
	t        *testing.T
	jobs     chan *job     // to the bubble's root goroutine
	ended    chan struct{} // closed when the bubble has ended
	closed   bool
	leftover string // how the bubble ended, if goroutines were left blocked in it
	early    string // the early note of the last run (EarlyNote)
	// pool holds the free workers of its runs (gpool.go); its root
	// goroutine alone touches it.
	pool rtproc.Pool
}

// job is one thing the bubble does: a controlled run of body, or f.
type job struct {
	cfg   Config
	body  func(t *testing.T)
	f     func()
	sched sched.Schedule
	err   error
	early string
	done  chan struct{}
}

// NewBubble returns a Bubble of t, or an error if this Go is not one
// whose channel layout and synctest the scheduler knows. Its goroutine
// starts with the first Run or Do. While tests run under control, the
// collector's heap goal is raised (rtproc.LessGC).
func NewBubble(t *testing.T) (*Bubble, error) {
	if err := rtlayout.CheckGo(); err != nil {
		return nil, err
	}
	rtproc.LessGC()
	return &Bubble{t: t}, nil
}

// Run makes one controlled run of body in the bubble, with cfg: body
// runs as the run's goroutine 0, with the bubble's *testing.T, which a
// body may fail as it fails a test's. It returns the run's schedule and
// error: nil, a *HangError, a *PanicError, or an error wrapping
// sched.ErrBudget or ErrStrategy (a replay's divergence is
// sched.Replay.Check's to find). The strategy's Begin and End, if it
// has them, are called around the run.
func (b *Bubble) Run(cfg Config, body func(t *testing.T)) (sched.Schedule, error) {
	j := b.exec(&job{cfg: cfg, body: body})
	b.early = j.early
	return j.sched, j.err
}

// EarlyNote says, after a Run that let virtual time pass while a
// goroutine of the code under test could run (Config.EarlyTimers), how
// much and while which goroutines, in one line; "" otherwise.
func (b *Bubble) EarlyNote() string { return b.early }

// Do runs f in the bubble, on no controlled goroutine, with the
// instrumented packages initialised afresh for it as for a run
// (pkginit.go): what f starts runs uncontrolled, and what it creates
// belongs to the bubble the runs share (an adapter's probe). A panic of
// f is returned as a *PanicError.
func (b *Bubble) Do(f func()) error {
	return b.exec(&job{f: f}).err
}

// exec hands j to the bubble, starting it on first use, and waits for it.
func (b *Bubble) exec(j *job) *job {
	if b.closed {
		j.err = errors.New("execspec/rt: the session is closed")
		return j
	}
	if b.jobs == nil {
		b.jobs, b.ended = make(chan *job), make(chan struct{})
		go func() {
			defer close(b.ended)
			defer func() {
				// Goroutines an earlier run or Do left blocked for good
				// (leaked by the library, not by a run: a run's own
				// leaks are its failure) keep the bubble from ending
				// cleanly; synctest says so with a panic, which would
				// end the process.
				if v := recover(); v != nil {
					b.leftover = fmt.Sprint(v)
				}
			}()
			defer watchSettles()()
			synctest.Test(b.t, func(bt *testing.T) {
				defer b.pool.Drain()
				for j := range b.jobs {
					serve(bt, &b.pool, j)
				}
			})
		}()
	}
	j.done = make(chan struct{})
	b.jobs <- j
	<-j.done
	return j
}

// serve does j on the root goroutine of the bubble, whose test is t and
// free workers pool.
func serve(t *testing.T, pool *rtproc.Pool, j *job) {
	defer close(j.done)
	defer func() {
		if v := recover(); v != nil {
			j.err = &PanicError{G: -1, Value: v, Stack: debug.Stack()}
		}
	}()
	// What earlier runs left running goes on until it blocks.
	settle()
	if j.f != nil {
		// As in a run, the instrumented packages are initialised afresh
		// in the bubble for f (pkginit.go).
		restore, err := initPackages()
		defer restore()
		if err != nil {
			j.err = err
			return
		}
		j.f()
		return
	}
	if b, ok := j.cfg.Strategy.(interface{ Begin() }); ok {
		b.Begin()
	}
	j.sched, j.err = runOnce(j.cfg, pool, func() { j.body(t) })
	j.early = lastEarly
	if e, ok := j.cfg.Strategy.(interface{ End(steps int) }); ok {
		e.End(j.sched.Steps)
	}
}

// Close ends the bubble: it waits for the goroutines left in it, as
// synctest.Test does, and returns what synctest said if some were left
// blocked for good (they stay so; the runs' verdicts stand). Close is
// idempotent; a Bubble that never ran ends at once.
func (b *Bubble) Close() error {
	if !b.closed {
		b.closed = true
		if b.jobs != nil {
			close(b.jobs)
			<-b.ended
		}
	}
	if b.leftover != "" {
		return fmt.Errorf("execspec/rt: the session's bubble ended with goroutines blocked for good: %s", b.leftover)
	}
	return nil
}
