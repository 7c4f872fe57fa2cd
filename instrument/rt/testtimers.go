package rt

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
	"unsafe"
)

// Test timers. Early timers (Config.EarlyTimers) let virtual time pass
// while a goroutine could still run, so that a library's own timeout can
// expire before its other goroutines get to run. Applied to every timer,
// they also fire the test's own guard (`case <-time.After(time.Second):
// t.Fatal("timeout")`) while the code under test could still run: the
// test then reports as stuck code that was only held back. So a timer
// the test's own code creates is never rushed:
//
//   - the rewriter routes the timers that the _test.go files of the
//     packages under test create (time.After, NewTimer, NewTicker, Tick,
//     AfterFunc, Sleep; context.WithTimeout, WithDeadline and their
//     Cause forms) through TestAfter, TestNewTimer, TestNewTicker,
//     TestTick, TestAfterFunc, TestSleep, TestWithTimeout, ..., which
//     register the runtime's timer behind them as the test's (keyed by
//     the timer, as hchan.timer points to it, so a Reset timer stays the
//     test's; a context's is its timerCtx's AfterFunc timer, read by
//     reflection);
//   - letting time pass early is offered (timerCand) only when some wait
//     that is not ready can be ended by a timer whose deadline is
//     strictly earlier than every pending test timer's: the external
//     phase that follows then wakes a library waiter before any test
//     timer could fire. Otherwise time passes only once every
//     controlled goroutine is blocked, as without early timers.
//
// A test timer is pending while its deadline is in the future; one whose
// time came cannot be rushed any more. One-shot timers nobody can reset
// (After, Sleep) leave the set once due or fired; the others stay for
// the run (a stopped timer may be reset).
//
// Left out: timers made outside the _test.go files of the packages under
// test (a test-only helper package, testify's Eventually): they count as
// the library's. A context the library derives from the test's has a
// timer of its own only when its deadline is not later than the test's
// (context.WithDeadline), so rushing it never passes the test's.
//
// Schedules record the rule (metaEarly): mode 2 is this one; mode 1,
// the rule before it (every timer may fire early), replays as it ran.

// testTimers is what a run knows of test timers and of early phases.
type testTimers struct {
	timers []testTimer
	// after holds the *time.Timer of each AfterFunc stand-in, in the
	// order of run.afterTimers.
	after []*time.Timer
	// Early phases (markEarly), for the report of a failing run: how
	// many, and the goroutines that could run in the last one.
	phases    int
	could     []int
	lastPhase time.Duration
}

type testTimer struct {
	t    unsafe.Pointer // the runtime's timer
	once bool           // After, Sleep: never reset
}

// earlyLegacy: the process replays a schedule of mode 1, made when
// every timer could fire early (replayMode).
var earlyLegacy bool

// timerOff is the offset of the runtime's timer in a *time.Timer (or
// *time.Ticker): runtime/time.go's timeTimer is a channel pointer and a
// bool, then the timer. testTimersReadable says whether it was checked:
// the timer behind a new timer's channel is there, and a when is read
// at the offset timerWhen reads (two timers an hour apart are an hour
// apart there). Without it test timers are not known, and mode 2 never
// lets time pass early.
const timerOff = 16

var testTimersReadable = timersReadable && checkTimerLayout()

func checkTimerLayout() bool {
	a, b := time.NewTimer(time.Hour), time.NewTimer(2*time.Hour)
	defer a.Stop()
	defer b.Stop()
	ha, hb := hchanOf(unsafe.Pointer(&a.C)), hchanOf(unsafe.Pointer(&b.C))
	if ha == nil || hb == nil || ha.timer != unsafe.Add(unsafe.Pointer(a), timerOff) {
		return false
	}
	d := timerWhen(hb) - timerWhen(ha) - int64(time.Hour)
	return timerWhen(ha) > 0 && d >= 0 && d < int64(time.Second)
}

// registerTest adds the runtime's timer t to the run's test timers, if
// the caller holds control.
func registerTest(t unsafe.Pointer, once bool) {
	r, g := current()
	if g == nil || t == nil || !testTimersReadable {
		return
	}
	r.tt.timers = append(r.tt.timers, testTimer{t, once})
}

// timerOfTimer returns the runtime's timer of a *time.Timer or
// *time.Ticker (p).
func timerOfTimer(p unsafe.Pointer) unsafe.Pointer { return unsafe.Add(p, timerOff) }

// TestAfter is time.After in a test's own code: the timer is the test's,
// never fired early.
func TestAfter(d time.Duration) <-chan time.Time {
	c := time.After(d)
	registerTest(timerOf(c), true)
	return c
}

// TestNewTimer is time.NewTimer in a test's own code (TestAfter).
func TestNewTimer(d time.Duration) *time.Timer {
	t := time.NewTimer(d)
	registerTest(timerOfTimer(unsafe.Pointer(t)), false)
	return t
}

// TestNewTicker is time.NewTicker in a test's own code (TestAfter).
func TestNewTicker(d time.Duration) *time.Ticker {
	t := time.NewTicker(d)
	registerTest(timerOfTimer(unsafe.Pointer(t)), false)
	return t
}

// TestTick is time.Tick in a test's own code (TestAfter).
func TestTick(d time.Duration) <-chan time.Time {
	c := time.Tick(d)
	registerTest(timerOf(c), false)
	return c
}

// TestAfterFunc is time.AfterFunc in a test's own code: AfterFunc (the
// callback runs controlled), and the timer is the test's (TestAfter).
func TestAfterFunc(d time.Duration, f func()) *time.Timer {
	t := AfterFunc(d, f)
	registerTest(timerOfTimer(unsafe.Pointer(t)), false)
	return t
}

// TestWithTimeout is context.WithTimeout in a test's own code: the
// context's timer is the test's (TestAfter).
func TestWithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return registerContext(context.WithTimeout(parent, d))
}

// TestWithTimeoutCause is context.WithTimeoutCause in a test's own code
// (TestWithTimeout).
func TestWithTimeoutCause(parent context.Context, d time.Duration, cause error) (context.Context, context.CancelFunc) {
	return registerContext(context.WithTimeoutCause(parent, d, cause))
}

// TestWithDeadline is context.WithDeadline in a test's own code
// (TestWithTimeout).
func TestWithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	return registerContext(context.WithDeadline(parent, d))
}

// TestWithDeadlineCause is context.WithDeadlineCause in a test's own
// code (TestWithTimeout).
func TestWithDeadlineCause(parent context.Context, d time.Time, cause error) (context.Context, context.CancelFunc) {
	return registerContext(context.WithDeadlineCause(parent, d, cause))
}

// registerContext registers the timer of ctx, a context just made by
// context.WithDeadline or WithTimeout: the AfterFunc timer of its
// timerCtx (the field timer, a *time.Timer). A context without one (its
// parent's deadline is earlier, or it has passed) has no timer of its
// own. contextTimer says where the field is (TestContextTimerFound
// fails if the context package moves it). It returns its arguments.
func registerContext(ctx context.Context, cancel context.CancelFunc) (context.Context, context.CancelFunc) {
	if t := contextTimer(ctx); t != nil {
		registerTest(timerOfTimer(t), true)
	}
	return ctx, cancel
}

// contextTimer returns the *time.Timer of ctx's timerCtx, or nil.
func contextTimer(ctx context.Context) unsafe.Pointer {
	v := reflect.ValueOf(ctx)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("timer")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*time.Timer]() || f.IsNil() {
		return nil
	}
	return f.UnsafePointer()
}

// TestSleep is time.Sleep in a test's own code: Sleep, on a timer that
// is the test's (TestAfter).
func TestSleep(d time.Duration) { sleepOn(d, TestAfter) }

// testDeadline returns the earliest deadline of the run's pending test
// timers (math.MaxInt64 if none), and drops the one-shot timers whose
// time came.
func (r *run) testDeadline() int64 {
	limit := int64(math.MaxInt64)
	now := r.now()
	keep := r.tt.timers[:0]
	for _, t := range r.tt.timers {
		w := *(*int64)(unsafe.Add(t.t, 24)) // as timerWhen
		if t.once && w <= now {
			continue
		}
		keep = append(keep, t)
		if w > now && w < limit {
			limit = w
		}
	}
	clear(r.tt.timers[len(keep):])
	r.tt.timers = keep
	return limit
}

// earlyLimit is the deadline before which a timer may fire early: none
// (0) in mode 2 without readable test timers, the earliest pending test
// timer's in mode 2, no limit in mode 1 (earlyLegacy) or with no test
// timer.
func (r *run) earlyLimit() int64 {
	switch {
	case earlyLegacy:
		return math.MaxInt64
	case !testTimersReadable:
		return 0
	case len(r.tt.timers) == 0:
		return math.MaxInt64
	}
	return r.testDeadline()
}

// when returns the earliest deadline of the armed timers that w's
// receive cases wait for, or 0 if none (timed, with the deadline).
func (w *selWait) when() int64 {
	first := int64(0)
	for i := range w.cases {
		if c := &w.cases[i]; c.recv && timerArmed(c.h) {
			if t := timerWhen(c.h); first == 0 || t < first {
				first = t
			}
		}
	}
	return first
}

// afterFuncWhen returns the deadline of the AfterFunc timer t, or 0 if
// it will not fire (afterFuncArmed).
func afterFuncWhen(t *time.Timer) int64 {
	return *(*int64)(unsafe.Add(unsafe.Pointer(t), timerOff+24))
}

// noteEarly records an early phase for the report: the goroutines that
// could run (markEarly's caller has chosen to let time pass).
func (r *run) noteEarly() {
	r.tt.phases++
	r.tt.could = r.tt.could[:0]
	for _, g := range r.alive {
		if r.canRun(g) {
			r.tt.could = append(r.tt.could, g.id)
		}
	}
}

// earlyNote is the line a failing run's report adds when the run let
// virtual time pass early, or "": how much, in how many phases, how long
// the last was and which goroutines could run then (0 is the test's
// body). Under mode 2 that time reached only timers of the code under
// test, never the test's own.
func (r *run) earlyNote() string {
	if r.tt.phases == 0 {
		return ""
	}
	ids := make([]string, len(r.tt.could))
	for i, id := range r.tt.could {
		ids[i] = fmt.Sprint(id)
		if id == 0 {
			ids[i] += " (the test's body)"
		}
	}
	who := "goroutine " + strings.Join(ids, ", ")
	if len(ids) > 1 {
		who = "goroutines " + strings.Join(ids, ", ")
	}
	last := ""
	if r.tt.phases > 1 {
		last = fmt.Sprintf(" in %d phases, the last %v", r.tt.phases, r.tt.lastPhase)
	}
	return fmt.Sprintf("early timers: the schedule let %v of virtual time pass%s while %s could still run, as if slow; --early-timers=false lets time pass only once every goroutine is blocked", r.earlyAll, last, who)
}

// lastEarly is the earlyNote of the process's last run (runs are one at
// a time).
var lastEarly string
