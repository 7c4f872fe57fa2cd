package pool

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Pool is a goroutine pool as the checks see it. Submit hands a task to
// the pool: it returns nil if the pool accepted the task (it must then run
// it exactly once) or an error if it refused it (it must then never run
// it). Submit may block, and is called from several goroutines at once.
// Close stops the pool: it returns nil only after every accepted task has
// finished, or an error saying which did not.
//
// A pool may have further abilities, each a small interface found by type
// assertion (abilities.go): Resizer, ContextSubmitter, WeightedSubmitter,
// ErrorSubmitter, Waiter and Canceller. The workloads exercise every
// ability a pool has, and the properties of that ability are checked.
type Pool interface {
	Submit(task func()) error
	Close() error
}

// Func adapts a pool given by its two operations, for example ants:
//
//	p, _ := ants.NewPool(n)
//	pool.Func(p.Submit, func() error { return p.ReleaseTimeout(time.Minute) })
//
// or gammazero/workerpool (whose Submit cannot fail):
//
//	wp := workerpool.New(n)
//	pool.Func(func(f func()) error { wp.Submit(f); return nil },
//		func() error { wp.StopWait(); return nil })
//
// To add abilities, embed the result in a struct with more methods, or use
// Adapter.
func Func(submit func(task func()) error, close func() error) Pool {
	return funcPool{submit, close}
}

type funcPool struct {
	submit func(func()) error
	close  func() error
}

func (p funcPool) Submit(task func()) error { return p.submit(task) }
func (p funcPool) Close() error             { return p.close() }

// Group is the shape of errgroup.Group and of conc's error pools: Go starts
// a task, Wait waits for all of them.
type Group interface {
	Go(f func() error)
	Wait() error
}

// FromGroup adapts a Group: Submit is Go with a task that returns nil
// (never refused); SubmitErr is Go; Close is Wait. The result is an
// ErrorSubmitter, so workloads also draw tasks that return errors; say
// how the group reports them with Config.Errors.
func FromGroup(g Group) Pool {
	return &Adapter{
		SubmitFunc: func(task func()) error {
			g.Go(func() error { task(); return nil })
			return nil
		},
		SubmitErrFunc: func(task func() error) error { g.Go(task); return nil },
		CloseFunc:     g.Wait,
	}
}

// ErrorMode says how a pool whose tasks return errors (ErrorSubmitter)
// reports them from Close and Wait.
type ErrorMode uint8

const (
	// ErrorsFirst: the error returned is one of the errors the tasks
	// returned (errgroup: the first), and nil if none returned one.
	ErrorsFirst ErrorMode = iota
	// ErrorsAll: the error returned holds every error the tasks returned
	// (errors.Is finds each), and is nil if none returned one.
	ErrorsAll
	// ErrorsIgnored: the pool does not report task errors; nothing is
	// checked about them.
	ErrorsIgnored
)

// PanicMode says what a pool does when a task panics.
type PanicMode uint8

const (
	// PanicsCrash: the pool lets a task's panic crash the program (as
	// errgroup before v0.13 and a bare go statement do), so workloads
	// never draw panicking tasks. The zero value.
	PanicsCrash PanicMode = iota
	// PanicsRecovered: the pool recovers a task's panic and goes on
	// serving; its own operations never panic because of it.
	PanicsRecovered
	// PanicsPropagated: the pool recovers a task's panic and re-panics
	// with it (or with a value that prints it) from Close or Wait, after
	// waiting for the other tasks, as conc does.
	PanicsPropagated
)

// Config says what to expect of the pool and how hard to try. The zero
// Config works: no capacity check, DefaultTimeout, workloads of up to
// DefaultMaxTasks tasks from up to DefaultMaxSubmitters goroutines.
type Config struct {
	// Capacity is the most tasks the pool promises to run at once (the
	// most weight, for a WeightedSubmitter); 0 means it promises no bound
	// (nothing is checked). With Space, the drawn Options.Capacity wins.
	Capacity int
	// Space declares the pool configurations the constructor given to
	// CheckOptions or RunOptions accepts; each case draws one.
	Space Space
	// Timeout is how long a case may go without any progress (no task
	// starting or ending, no operation returning) before it fails as a
	// hang. Default 2s. Not used under control, where the scheduler
	// decides a hang (control.go).
	Timeout time.Duration
	// Grace is how long after Close a check waits for late tasks, to tell
	// a Close that does not wait (the task runs later) from a lost task
	// (it never runs). Default 50ms.
	Grace time.Duration
	// MaxTasks and MaxSubmitters bound the generated workloads. Sizes are
	// drawn skewed to the small (a case's bound is MaxTasks/8, /4, /2 or
	// MaxTasks, each as likely, and its size uniform below it), so most
	// cases are quick and shrink fast while one in four can reach the
	// hundreds of tasks some races need (a close racing a queue that a
	// pool of one to three workers drains).
	MaxTasks      int
	MaxSubmitters int
	// Nested lets tasks submit further tasks from inside the pool. Pools
	// with a bounded number of workers and a blocking Submit can deadlock
	// on that by design, so it is off by default.
	Nested bool
	// Goexit makes about one task in ten call runtime.Goexit, as a task
	// does when it calls t.FailNow (or gomock does on a failed
	// expectation). The pool must survive it: the other tasks still run,
	// as promptly as before, and Close still returns.
	Goexit bool
	// Panics says what the pool does with a panicking task; unless it is
	// PanicsCrash, about one task in ten panics.
	Panics PanicMode
	// Errors says how an ErrorSubmitter reports the errors of its tasks.
	Errors ErrorMode
	// MayRefuse says the pool may refuse tasks while it is open (a
	// non-blocking pool at capacity); otherwise a refusal before Close is
	// a finding (submit-succeeds). Options.Nonblocking and a bounded
	// queue with Space.QueueRefuses say so per configuration.
	MayRefuse bool
	// Pin runs each submitter on an OS thread pinned to a CPU, round robin
	// over the CPUs the process may use (see package stress), so that
	// submitters really run at the same time. Where pinning is not
	// permitted they run unpinned; under control, where one goroutine
	// runs at a time, never.
	Pin bool
	// CloseEarly lets Close run concurrently with the submitters: each task
	// is then either accepted (and must run) or refused (and must not).
	CloseEarly bool
	// Progress bounds how long a task may wait to start while the pool
	// has room for it, as a multiple of the pool's median start delay in
	// the same case. Default 1000. A negative value turns the property off.
	Progress float64
	// ProgressFloor is the least stall reported, whatever the median:
	// timer and scheduler noise stays below it. Default 50ms.
	ProgressFloor time.Duration
	// RefuseDone says a submit whose context is already done when it is
	// called is refused (x/sync/semaphore since v0.7.0); otherwise such a
	// submit may also be accepted, and must then run.
	RefuseDone bool
	// LazyShrink says a shrink (Resize to less) only stops the pool from
	// adding workers: the workers it has keep taking tasks until each
	// retires in its own time, so tasks may run up to the largest capacity
	// in effect so far, whatever came after. ants works so (Tune lowers
	// the bound on spawning; idle workers stay in its queue until they
	// expire, and a busy one leaves only after its next task). A grow
	// still counts from the call of Resize, and no more tasks than the
	// largest capacity so far may ever run at once.
	LazyShrink bool
	// Known lists defects already known and accepted, each a Finding's
	// Key ("capacity", or "progress/Resize" for one trigger only); they
	// are counted but not reported.
	Known []string
	// Cases is the number of workloads Run tries. Default: the test flag
	// -pool.cases where it is set, else 100.
	Cases int
	// Seed seeds Run's workloads. Default: the test flag -pool.seed where
	// it is set, else 1.
	Seed uint64
	// Retries is how many times a workload is run, while shrinking, before
	// a candidate is taken not to show the defect (races do not repeat on
	// demand). Default 20.
	Retries int
	// ShrinkTime bounds the time spent shrinking one defect. Default 20s.
	ShrinkTime time.Duration
	// InProcess runs CheckOptions' cases in the test's own process; by
	// default they run in a child process, so that a crash of the pool is
	// a finding rather than the end of the test binary.
	InProcess bool
	// MaxCrashes stops CheckOptions after that many crashing cases (each
	// costs a child process). Default 10.
	MaxCrashes int
	// MaxHangs stops Explore after that many hanging cases (each leaks
	// the pool's stuck goroutines and costs a Timeout). Default 3.
	MaxHangs int

	control bool           // the case runs under the controlled runtime (control.go)
	onAbort func(*Finding) // under control: the scheduler stopped the run; what was stuck
}

// Defaults for the zero Config.
const (
	DefaultTimeout       = 2 * time.Second
	DefaultGrace         = 50 * time.Millisecond
	DefaultMaxTasks      = 256
	DefaultMaxSubmitters = 8
	DefaultCases         = 100
	DefaultRetries       = 20
	DefaultProgress      = 1000
	DefaultProgressFloor = 50 * time.Millisecond
	DefaultShrinkTime    = 20 * time.Second
)

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	if c.MaxTasks <= 0 {
		c.MaxTasks = DefaultMaxTasks
	}
	if c.MaxSubmitters <= 0 {
		c.MaxSubmitters = DefaultMaxSubmitters
	}
	if c.Cases <= 0 {
		c.Cases = DefaultCases
		if *flagCases > 0 {
			c.Cases = *flagCases
		}
	}
	if c.Retries <= 0 {
		c.Retries = DefaultRetries
	}
	if c.Seed == 0 {
		c.Seed = 1
		if *flagSeed > 0 {
			c.Seed = *flagSeed
		}
	}
	if c.Progress == 0 {
		c.Progress = DefaultProgress
	}
	if c.ProgressFloor <= 0 {
		c.ProgressFloor = DefaultProgressFloor
	}
	if c.MaxCrashes <= 0 {
		c.MaxCrashes = 10
	}
	if c.MaxHangs <= 0 {
		c.MaxHangs = 3
	}
	if c.ShrinkTime <= 0 {
		c.ShrinkTime = DefaultShrinkTime
	}
	return c
}

// Property names, as they appear in Findings.
const (
	ExactlyOnce    = "exactly-once"
	NoneLost       = "none-lost"
	RefusedNotRun  = "refused-not-run"
	CapacityBound  = "capacity"
	ShutdownWaits  = "shutdown-waits"
	NoHang         = "no-hang"
	SubmitSucceeds = "submit-succeeds"
	NoPanic        = "no-panic"
	// Progress: a task that could start (the pool runs fewer tasks, or
	// less weight, than its capacity) starts within the bound; its Op
	// names what the stall followed — Resize (a lost wakeup after a
	// grow), a task's panic or Goexit (a worker lost), a cancelled
	// submit (a lost wakeup after a waiter ahead gave up), a worker's
	// idle expiry (IdleExpiry: under control only), a task's end, or
	// Submit.
	Progress = "progress"
	// ErrorsPropagate: Close and Wait report the tasks' errors as
	// Config.Errors says, and only those of their own round (reuse).
	ErrorsPropagate = "errors-propagate"
	// Reuse: after Wait the pool accepts and runs tasks again.
	Reuse = "reuse"
	// CancelStops: after Cancel, Close returns and no task starts after
	// it returned.
	CancelStops = "cancel-stops"
	// DoneRefused: with Config.RefuseDone, a submit whose context is done
	// before the call is refused.
	DoneRefused = "done-refused"
	// NoCrash: the pool does not end the process (a panic on a goroutine
	// of its own, a fatal error, os.Exit); its Op names the function of
	// the pool that crashed.
	NoCrash = "no-crash"
)

// Properties lists every property with a line of doc.
var Properties = []struct{ Name, Doc string }{
	{ExactlyOnce, "no task runs twice"},
	{NoneLost, "every accepted task runs (unless the pool was cancelled)"},
	{RefusedNotRun, "a task whose Submit failed (refused, or its context cancelled) never runs"},
	{CapacityBound, "no more tasks (weight) run at once than the capacity in effect, across Resize"},
	{ShutdownWaits, "Close and Wait return only after every task accepted before them has finished"},
	{NoHang, "every operation returns and every accepted task runs, with progress at least every Timeout"},
	{SubmitSucceeds, "an open pool that blocks when full does not refuse tasks"},
	{NoPanic, "the pool's own operations do not panic (a propagated task panic excepted)"},
	{Progress, "a task the pool has room for starts within the bound, after a submit, a grow, a worker's death or a cancelled waiter"},
	{ErrorsPropagate, "Close and Wait report the tasks' errors as documented, and only their own round's"},
	{Reuse, "after Wait the pool accepts and runs new tasks"},
	{CancelStops, "after Cancel, Close returns and no task starts once it has returned"},
	{DoneRefused, "with Config.RefuseDone, a submit whose context is already done is refused"},
	{NoCrash, "the pool does not crash the process (a panic on a goroutine of its own, a fatal error, os.Exit)"},
}

// Finding is one property that failed in one case.
type Finding struct {
	Property string
	// Op is the operation that triggered the defect (Submit, Resize,
	// Close, Wait, Cancel, a task's panic…); with Property it makes Key.
	Op     string
	Detail string
	// Pool is the configuration of the pool that failed, and Workload the
	// case (shrunk, when the finding comes from Run or Check).
	Pool     string
	Workload string
	// Stack is the stack of a panic, or of the stuck goroutines of a
	// hang, when there is one; it is volatile, so it is not in Error.
	Stack string
	// Runs and Failures say how often the shrunk case showed the defect
	// when it was run again.
	Runs, Failures int
	// After is how long Explore had run when it first saw the defect
	// (before shrinking it), and Case the number of the case (from 0)
	// that showed it.
	After time.Duration
	Case  int
	// Schedule is the file that replays the finding under control (the
	// shrunk case inside it), and Replay the command that does.
	Schedule, Replay string

	shrunk Workload // under control: the case, for the schedule file
	cause  error    // under control: the scheduler's verdict (a hang, a panic), if it was one
}

// Key identifies a defect: its property and the operation that triggered
// it. Config.Known takes keys, or bare properties.
func (f *Finding) Key() string {
	if f.Op == "" {
		return f.Property
	}
	return f.Property + "/" + f.Op
}

func (f *Finding) Error() string {
	var b strings.Builder
	b.WriteString("pool: ")
	b.WriteString(f.Property)
	if f.Op != "" {
		b.WriteString(" (after " + f.Op + ")")
	}
	b.WriteString(": " + f.Detail)
	if f.Pool != "" {
		b.WriteString(" [pool " + f.Pool + "]")
	}
	if f.Workload != "" {
		b.WriteString(" [case: " + f.Workload + "]")
	}
	return b.String()
}

// ErrViolated is wrapped by every Finding's error chain, for errors.Is.
var ErrViolated = errors.New("pool: property violated")

// Is makes errors.Is(f, ErrViolated) true.
func (f *Finding) Is(target error) bool { return target == ErrViolated }

// Unwrap returns the controlled runtime's verdict behind the finding (an
// *rt.HangError, an *rt.PanicError), or nil.
func (f *Finding) Unwrap() error { return f.cause }

func finding(prop, op, format string, args ...any) *Finding {
	return &Finding{Property: prop, Op: op, Detail: fmt.Sprintf(format, args...)}
}
