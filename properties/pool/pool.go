package pool

import (
	"errors"
	"fmt"
	"time"
)

// Pool is a goroutine pool as the checks see it. Submit hands a task to
// the pool: it returns nil if the pool accepted the task (it must then run
// it exactly once) or an error if it refused it (it must then never run
// it). Submit may block, and is called from several goroutines at once.
// Close stops the pool: it returns nil only after every accepted task has
// finished, or an error saying which did not.
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
// (never refused), Close is Wait.
func FromGroup(g Group) Pool {
	return Func(func(task func()) error {
		g.Go(func() error { task(); return nil })
		return nil
	}, g.Wait)
}

// Config says what to expect of the pool and how hard to try. The zero
// Config works: no capacity check, DefaultTimeout, workloads of up to
// DefaultMaxTasks tasks from up to DefaultMaxSubmitters goroutines.
type Config struct {
	// Capacity is the most tasks the pool promises to run at once; 0 means
	// it promises no bound (nothing is checked).
	Capacity int
	// Timeout bounds one case: submitting every task and closing the pool.
	// When it passes, the case fails as a hang.
	Timeout time.Duration
	// Grace is how long after Close a check waits for late tasks, to tell
	// a Close that does not wait (the task runs later) from a lost task
	// (it never runs). Default 50ms.
	Grace time.Duration
	// MaxTasks and MaxSubmitters bound the generated workloads.
	MaxTasks      int
	MaxSubmitters int
	// Nested lets tasks submit further tasks from inside the pool. Pools
	// with a bounded number of workers and a blocking Submit can deadlock
	// on that by design, so it is off by default.
	Nested bool
	// Goexit makes about one task in ten call runtime.Goexit, as a task
	// does when it calls t.FailNow (or gomock does on a failed
	// expectation). The pool must survive it: the other tasks still run
	// and Close still returns.
	Goexit bool
	// MayRefuse says the pool may refuse tasks while it is open (a
	// non-blocking pool at capacity); otherwise a refusal before Close is
	// a finding (submit-succeeds).
	MayRefuse bool
	// Pin runs each submitter on an OS thread pinned to a CPU, round robin
	// over the CPUs the process may use (see package stress), so that
	// submitters really run at the same time. Where pinning is not
	// permitted they run unpinned.
	Pin bool
	// CloseEarly lets Close run concurrently with the submitters: each task
	// is then either accepted (and must run) or refused (and must not).
	CloseEarly bool
	// Cases is the number of workloads Run tries (Check uses rapid's
	// -rapid.checks). Default 100.
	Cases int
	// Seed seeds Run's workloads. Default 1.
	Seed uint64
	// Retries is how many times Check runs a workload while shrinking a
	// failure (see Check). Default 50.
	Retries int
}

// Defaults for the zero Config.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultGrace         = 50 * time.Millisecond
	DefaultMaxTasks      = 64
	DefaultMaxSubmitters = 4
	DefaultCases         = 100
	DefaultRetries       = 50
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
	}
	if c.Retries <= 0 {
		c.Retries = DefaultRetries
	}
	if c.Seed == 0 {
		c.Seed = 1
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
)

// Finding is one property that failed in one case.
type Finding struct {
	Property string
	Detail   string
}

func (f *Finding) Error() string { return "pool: " + f.Property + ": " + f.Detail }

// ErrViolated is wrapped by every Finding's error chain, for errors.Is.
var ErrViolated = errors.New("pool: property violated")

// Is makes errors.Is(f, ErrViolated) true.
func (f *Finding) Is(target error) bool { return target == ErrViolated }

func finding(prop, format string, args ...any) error {
	return &Finding{Property: prop, Detail: fmt.Sprintf(format, args...)}
}
