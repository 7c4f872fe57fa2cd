package pool

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The optional abilities of a Pool, each found by type assertion, and the
// operations of a workload that use them:
//
//	ability            operation in a workload          properties it adds
//	Resizer            Resize(n), from any submitter,   capacity across resize;
//	                   while others are blocked         progress after a grow
//	ContextSubmitter   a submit whose context is        refused-not-run for a
//	                   cancelled while it waits         cancelled submit; progress
//	                                                    after a waiter gave up
//	WeightedSubmitter  a submit of weight w (1..cap),   capacity in weight; progress
//	                   possibly cancelled               of the head waiter
//	ErrorSubmitter     tasks that return an error       errors-propagate
//	Waiter             Wait between rounds (reuse)      reuse; shutdown-waits for Wait
//	Canceller          Cancel the pool's context        cancel-stops
//
// A pool without an ability never sees its operations.

// Resizer is a pool whose capacity can change while it runs (ants' Tune).
// Resize must not wait for running tasks; tasks blocked in Submit must be
// served as soon as the new capacity has room for them.
type Resizer interface {
	Resize(capacity int)
}

// ContextSubmitter submits a task unless ctx is done first: it returns
// nil if the task was accepted (it must run) or an error (it must not).
// A cancelled waiter must not hold up the waiters behind it.
type ContextSubmitter interface {
	SubmitContext(ctx context.Context, task func()) error
}

// WeightedSubmitter runs a task that holds weight units of the capacity
// while it runs, the shape of a pool guarded by x/sync/semaphore.Weighted.
// It waits for room unless ctx is done first, and returns as
// ContextSubmitter does. Weights are drawn from 1 to the capacity.
type WeightedSubmitter interface {
	SubmitWeighted(ctx context.Context, weight int, task func()) error
}

// ErrorSubmitter runs tasks that return an error, the shape of errgroup
// and of conc's ErrorPool; Close and Wait report the errors as
// Config.Errors says.
type ErrorSubmitter interface {
	SubmitErr(task func() error) error
}

// Waiter is a pool that can be waited for and then used again (reuse):
// Wait returns once every task accepted before it was called has
// finished, with the tasks' errors for an ErrorSubmitter, and the pool
// then accepts tasks again. Wait is never called concurrently with Submit.
type Waiter interface {
	Wait() error
}

// Canceller is a pool bound to a context that the workload may cancel
// (pond's WithContext, errgroup.WithContext): after Cancel, queued tasks
// may be dropped and Submit may refuse, but Close must return and no task
// may start after it has returned.
type Canceller interface {
	Cancel()
}

// Options is one pool configuration, drawn from Config.Space for each
// case and given to the constructor of CheckOptions and RunOptions. The
// zero value of a field means the adapter's default.
type Options struct {
	Capacity    int
	QueueBound  int           // 0: unbounded
	IdleTimeout time.Duration // 0: the library's default
	Nonblocking bool          // Submit refuses instead of waiting when full
}

func (o Options) String() string {
	var parts []string
	if o.Capacity > 0 {
		parts = append(parts, fmt.Sprintf("capacity=%d", o.Capacity))
	}
	if o.QueueBound > 0 {
		parts = append(parts, fmt.Sprintf("queue=%d", o.QueueBound))
	}
	if o.IdleTimeout > 0 {
		parts = append(parts, fmt.Sprintf("idle-timeout=%v", o.IdleTimeout))
	}
	if o.Nonblocking {
		parts = append(parts, "nonblocking")
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, " ")
}

// Space declares the ranges a pool constructor accepts; each case draws
// its Options from them. A zero range leaves the field zero (the
// adapter's default), so the zero Space draws Options{Capacity:
// Config.Capacity}.
type Space struct {
	Capacity    [2]int           // inclusive; drawn small values first
	QueueBound  [2]int           // inclusive
	IdleTimeout [2]time.Duration // inclusive
	// Nonblocking lets cases draw a nonblocking pool (which may refuse).
	Nonblocking bool
	// QueueRefuses says a pool with a bounded queue refuses when the queue
	// is full, rather than making Submit wait.
	QueueRefuses bool
}

// mayRefuse says whether a pool with these options may refuse while open.
func (c Config) mayRefuse(o Options) bool {
	return c.MayRefuse || o.Nonblocking || (o.QueueBound > 0 && c.Space.QueueRefuses)
}

// Adapter builds a Pool with any set of abilities from functions; leave a
// function nil and the pool lacks the ability (the adapter hides it from
// the type assertions by wrapping only what is set).
type Adapter struct {
	SubmitFunc         func(task func()) error
	CloseFunc          func() error
	ResizeFunc         func(capacity int)
	SubmitContextFunc  func(ctx context.Context, task func()) error
	SubmitWeightedFunc func(ctx context.Context, weight int, task func()) error
	SubmitErrFunc      func(task func() error) error
	WaitFunc           func() error
	CancelFunc         func()
}

func (a *Adapter) Submit(task func()) error { return a.SubmitFunc(task) }
func (a *Adapter) Close() error {
	if a.CloseFunc == nil {
		return nil
	}
	return a.CloseFunc()
}

// abilities are the optional interfaces of p, with Adapter's unset
// functions taken as absent.
type abilities struct {
	resize   Resizer
	ctx      ContextSubmitter
	weighted WeightedSubmitter
	errs     ErrorSubmitter
	wait     Waiter
	cancel   Canceller
}

func abilitiesOf(p Pool) abilities {
	if a, ok := p.(*Adapter); ok {
		var ab abilities
		if a.ResizeFunc != nil {
			ab.resize = resizeFunc(a.ResizeFunc)
		}
		if a.SubmitContextFunc != nil {
			ab.ctx = ctxFunc(a.SubmitContextFunc)
		}
		if a.SubmitWeightedFunc != nil {
			ab.weighted = weightedFunc(a.SubmitWeightedFunc)
		}
		if a.SubmitErrFunc != nil {
			ab.errs = errFunc(a.SubmitErrFunc)
		}
		if a.WaitFunc != nil {
			ab.wait = waitFunc(a.WaitFunc)
		}
		if a.CancelFunc != nil {
			ab.cancel = cancelFunc(a.CancelFunc)
		}
		return ab
	}
	var ab abilities
	ab.resize, _ = p.(Resizer)
	ab.ctx, _ = p.(ContextSubmitter)
	ab.weighted, _ = p.(WeightedSubmitter)
	ab.errs, _ = p.(ErrorSubmitter)
	ab.wait, _ = p.(Waiter)
	ab.cancel, _ = p.(Canceller)
	return ab
}

func (ab abilities) String() string {
	var names []string
	for _, x := range []struct {
		has  bool
		name string
	}{{ab.resize != nil, "Resizer"}, {ab.ctx != nil, "ContextSubmitter"}, {ab.weighted != nil, "WeightedSubmitter"},
		{ab.errs != nil, "ErrorSubmitter"}, {ab.wait != nil, "Waiter"}, {ab.cancel != nil, "Canceller"}} {
		if x.has {
			names = append(names, x.name)
		}
	}
	return strings.Join(names, ",")
}

type resizeFunc func(int)

func (f resizeFunc) Resize(n int) { f(n) }

type ctxFunc func(context.Context, func()) error

func (f ctxFunc) SubmitContext(ctx context.Context, t func()) error { return f(ctx, t) }

type weightedFunc func(context.Context, int, func()) error

func (f weightedFunc) SubmitWeighted(ctx context.Context, w int, t func()) error { return f(ctx, w, t) }

type errFunc func(func() error) error

func (f errFunc) SubmitErr(t func() error) error { return f(t) }

type waitFunc func() error

func (f waitFunc) Wait() error { return f() }

type cancelFunc func()

func (f cancelFunc) Cancel() { f() }
