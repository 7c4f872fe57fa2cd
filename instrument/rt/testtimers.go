package rt

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unsafe"

	"github.com/execspec/execspec/instrument/rt/internal/rtlayout"
)

// Test timers. Early timers (Config.EarlyTimers) let virtual time pass
// while a goroutine could still run, so that a library's own timeout can
// expire before its other goroutines get to run. Applied to every timer,
// they also fire the test's own guard (`case <-time.After(time.Second):
// t.Fatal("timeout")`) while the code under test could still run: the
// test then reports as stuck code that was only held back. So a timer
// the test's own code creates is never rushed:
//
//   - the timers of the test's own code are registered with OwnTimer
//     and OwnFuncTimer (by rtstd.TestAfter, ..., which the rewriter
//     routes them through), keyed by the runtime's timer behind them, as
//     hchan.Timer points to it, so a Reset timer stays the test's;
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

// testTimersReadable: the timers behind time.Timer values can be read
// (rtlayout.TimerOfReadable). Without it test timers are not known, and
// mode 2 never lets time pass early.
var testTimersReadable = rtlayout.TimerOfReadable

// OwnTimer registers the timer behind c, the channel of a timer or a
// ticker (time.After, Tick, a Timer's or Ticker's C), as the test's own:
// early time never reaches it (rtstd.TestAfter). once says that nobody
// can reset it (After): it leaves the set once due. Outside a
// controlled goroutine, or where timers are not read, it does nothing.
func OwnTimer(c <-chan time.Time, once bool) {
	if testTimersReadable {
		if h := rtlayout.ChanOf(unsafe.Pointer(&c)); h != nil {
			registerTest(h.Timer, once)
		}
	}
}

// OwnFuncTimer is OwnTimer for a timer without a channel (time.AfterFunc's,
// a context's), or nil.
func OwnFuncTimer(t *time.Timer, once bool) {
	if t != nil {
		registerTest(rtlayout.TimerOf(t), once)
	}
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

// testDeadline returns the earliest deadline of the run's pending test
// timers (math.MaxInt64 if none), and drops the one-shot timers whose
// time came.
func (r *run) testDeadline() int64 {
	limit := int64(math.MaxInt64)
	now := r.now()
	keep := r.tt.timers[:0]
	for _, t := range r.tt.timers {
		w := *rtlayout.WhenOf(t.t)
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
		if c := &w.cases[i]; c.recv && rtlayout.TimerArmed(c.h) {
			if t := rtlayout.TimerWhen(c.h); first == 0 || t < first {
				first = t
			}
		}
	}
	return first
}

// afterFuncWhen returns the deadline of the AfterFunc timer t, or 0 if
// it will not fire (afterFuncArmed).
func afterFuncWhen(t *time.Timer) int64 {
	return *rtlayout.WhenOf(rtlayout.TimerOf(t))
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
