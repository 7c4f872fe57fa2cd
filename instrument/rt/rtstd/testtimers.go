package rtstd

import (
	"context"
	"reflect"
	"time"

	"github.com/execspec/execspec/instrument/rt"
)

// The test's own timers. The rewriter routes the timers that the _test.go
// files of the packages under test create (time.After, NewTimer,
// NewTicker, Tick, AfterFunc, Sleep; context.WithTimeout, WithDeadline
// and their Cause forms) through TestAfter, TestNewTimer, TestNewTicker,
// TestTick, TestAfterFunc, TestSleep, TestWithTimeout, ..., which
// register the runtime's timer behind them as the test's (rt.OwnTimer,
// rt.OwnFuncTimer): with early timers (rt.Config.EarlyTimers) virtual
// time never passes early to one of them, so the test's guard does not
// fire while the code under test could still run. A context's timer is
// its timerCtx's AfterFunc timer, read by reflection.
//
// Left out: timers made outside the _test.go files of the packages under
// test (a test-only helper package, testify's Eventually): they count as
// the library's. A context the library derives from the test's has a
// timer of its own only when its deadline is not later than the test's
// (context.WithDeadline), so rushing it never passes the test's.

// TestAfter is time.After in a test's own code: the timer is the test's,
// never fired early.
func TestAfter(d time.Duration) <-chan time.Time {
	c := time.After(d)
	rt.OwnTimer(c, true)
	return c
}

// TestNewTimer is time.NewTimer in a test's own code (TestAfter).
func TestNewTimer(d time.Duration) *time.Timer {
	t := time.NewTimer(d)
	rt.OwnTimer(t.C, false)
	return t
}

// TestNewTicker is time.NewTicker in a test's own code (TestAfter).
func TestNewTicker(d time.Duration) *time.Ticker {
	t := time.NewTicker(d)
	rt.OwnTimer(t.C, false)
	return t
}

// TestTick is time.Tick in a test's own code (TestAfter).
func TestTick(d time.Duration) <-chan time.Time {
	c := time.Tick(d)
	rt.OwnTimer(c, false)
	return c
}

// TestAfterFunc is time.AfterFunc in a test's own code: rt.AfterFunc
// (the callback runs controlled), and the timer is the test's
// (TestAfter).
func TestAfterFunc(d time.Duration, f func()) *time.Timer {
	t := rt.AfterFunc(d, f)
	rt.OwnFuncTimer(t, false)
	return t
}

// TestSleep is time.Sleep in a test's own code: rt.Sleep, on a timer
// that is the test's (TestAfter).
func TestSleep(d time.Duration) {
	if _, ok := rt.Holding(); !ok || d <= 0 {
		rt.Sleep(d)
		return
	}
	rt.Recv(TestAfter(d))
}

// TestWithTimeout is context.WithTimeout in a test's own code: the
// context's timer is the test's (TestAfter).
func TestWithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return ownContext(context.WithTimeout(parent, d))
}

// TestWithTimeoutCause is context.WithTimeoutCause in a test's own code
// (TestWithTimeout).
func TestWithTimeoutCause(parent context.Context, d time.Duration, cause error) (context.Context, context.CancelFunc) {
	return ownContext(context.WithTimeoutCause(parent, d, cause))
}

// TestWithDeadline is context.WithDeadline in a test's own code
// (TestWithTimeout).
func TestWithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	return ownContext(context.WithDeadline(parent, d))
}

// TestWithDeadlineCause is context.WithDeadlineCause in a test's own
// code (TestWithTimeout).
func TestWithDeadlineCause(parent context.Context, d time.Time, cause error) (context.Context, context.CancelFunc) {
	return ownContext(context.WithDeadlineCause(parent, d, cause))
}

// ownContext registers the timer of ctx, a context just made by
// context.WithDeadline or WithTimeout, as the test's: the AfterFunc
// timer of its timerCtx (contextTimer; none if its parent's deadline is
// earlier, or it has passed). It returns its arguments.
func ownContext(ctx context.Context, cancel context.CancelFunc) (context.Context, context.CancelFunc) {
	rt.OwnFuncTimer(contextTimer(ctx), true)
	return ctx, cancel
}

// contextTimer returns the *time.Timer of ctx's timerCtx (the field
// timer; TestContextTimerFound fails if the context package moves it),
// or nil.
func contextTimer(ctx context.Context) *time.Timer {
	v := reflect.ValueOf(ctx)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("timer")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*time.Timer]() || f.IsNil() {
		return nil
	}
	return (*time.Timer)(f.UnsafePointer())
}
