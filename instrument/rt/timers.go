package rt

import (
	"fmt"
	"time"
)

// Early time. With Config.EarlyTimers the schedule may choose a goroutine
// waiting for a timer while others could run; virtual time then passes
// until a timer fires, and the goroutines that could have run were slow
// meanwhile. That time is real to the program (a timeout expires, a
// deadline passes) but it says nothing of the program's own speed: a
// check that measures how long something took, in virtual time, must not
// count it against the code under test (a pool was not slow to start a
// task because the schedule held its worker back while time passed).
// The run keeps the sum: EarlyTime reads it.

// markEarly notes that the schedule chose to let time pass while another
// goroutine could run: the coordinator's next external phase is early.
// It counts for EarlyTime unless every goroutine that could run is the
// harness's (Harness): the code under test was blocked, and the time
// that passes is its own. It counts for the run's own clock of how long
// goroutines go on after the body returned (sinceMainEnd) either way.
func (r *run) markEarly() {
	r.noteEarly()
	r.earlyFrom = time.Now()
	r.earlyHarness = true
	for _, g := range r.alive {
		if !g.harness && (g.state == gRunnable || g.state == gBlocked && r.isReady(&g.w)) {
			r.earlyHarness = false
			return
		}
	}
}

// Harness marks the calling goroutine as running the test's own code (on
// true) or the code under test (on false), and returns its mark before;
// a goroutine started by Go takes its parent's mark. EarlyTime leaves out
// the time let pass while only goroutines so marked could run: the code
// under test was blocked then, not held back. A harness marks its
// goroutines and unmarks them around each call into the code under test
// (the pool suite: its submitters, controller and task bodies are the
// harness's, Submit, Resize, Close and the pool's own goroutines are the
// pool's). Outside a controlled goroutine it does nothing and returns
// false.
func Harness(on bool) bool {
	_, g := current()
	if g == nil {
		return false
	}
	prev := g.harness
	g.harness = on
	return prev
}

// endEarly adds the virtual time that passed since markEarly, if the
// external phase that just ended was early.
func (r *run) endEarly() {
	if !r.earlyFrom.IsZero() {
		d := time.Since(r.earlyFrom)
		r.earlyAll += d
		r.tt.lastPhase = d
		if !r.earlyHarness {
			r.early.Add(int64(d))
		}
		r.earlyFrom = time.Time{}
	}
}

// sinceMainEnd is how long the goroutines left have gone on since the
// body returned, for Config.LeakAfter: the virtual time since then less
// what the schedule let pass while one of them could run. Counted in
// plain virtual time, a goroutine that the schedule held back while
// timers fired (its last steps before it would end) was reported as
// leaked: ants v2.7.5's purge goroutine, runnable when the body
// returned, saw two of the pool's other tickers fire early, 1 s in all,
// and was "still going" past the second allowed.
func (r *run) sinceMainEnd() time.Duration {
	return time.Since(r.mainEnd) - (r.earlyAll - r.earlyAtMainEnd)
}

// EarlyTime returns how much virtual time the run in progress has let
// pass while a controlled goroutine of the code under test could run
// (Config.EarlyTimers: a timer fired early, as if the others were slow;
// goroutines marked by Harness do not count); 0 outside a run or
// without EarlyTimers. It never decreases during a run, and never grows
// faster than the virtual clock: time.Since(t0) less the EarlyTime gained
// since t0 is the time that passed only once every controlled goroutine
// was blocked (or a goroutine was outside the scheduler), a clock that
// neither runs backwards nor counts the schedule's holding back. Safe
// for concurrent use.
func EarlyTime() time.Duration {
	r := active.Load()
	if r == nil {
		return 0
	}
	return time.Duration(r.early.Load())
}

// timerCand adds to cands, the goroutines that can run, one candidate
// that stands for letting virtual time pass: the first goroutine waiting
// for a timer that will fire (a sleep, a timer's or ticker's channel), or
// else the stand-in of a pending AfterFunc timer (a stopped one may be
// reset: it stays listed). Choosing it lets time pass until the earliest
// timer fires while the others wait (the external phase), as if they had
// been slow. One candidate, not one per timer: which of them is chosen
// makes no difference (the earliest timer fires, whoever waits for it).
//
// Only timers due before every pending test timer count (earlyLimit,
// testtimers.go): a timer the test's own code waits for is never rushed,
// since the phase that follows wakes the waiter of an earlier timer
// first. In mode 1 (a schedule made before that rule) every timer counts.
//
// And not at every decision: offered at each, it would be chosen at
// about half of them (one goroutine could run), and a goroutine would
// seldom get through a handful of steps before every timer fired: a
// pool whose submitter must block before a Resize due in a moment saw
// it so in one run of hundreds to thousands, against the twelfth
// without early timers. It is offered at one decision in earlyOdds,
// drawn from the run's checksum so far (earlyOffered): a function of
// the choices made, so a replay offers it where the run did.
func (r *run) timerCand(cands []*gor) []*gor {
	if !r.earlyOffered() {
		return cands
	}
	limit := r.earlyLimit()
	for _, h := range r.alive {
		if h.state == gBlocked && h.w.sel != nil {
			if w := h.w.sel.when(); w > 0 && w < limit && !r.isReady(&h.w) {
				return append(cands, h)
			}
		}
	}
	for i, h := range r.afterTimers {
		if w := afterFuncWhen(r.tt.after[i]); w > 0 && w < limit {
			return append(cands, h)
		}
	}
	return cands
}

// earlyOdds: letting time pass early is offered at one decision in
// earlyOdds (timerCand).
const earlyOdds = 4

// earlyOffered draws, from the checksum of the run so far and its step
// count, whether this decision offers letting time pass early.
func (r *run) earlyOffered() bool {
	h := (r.sum ^ uint64(r.steps)<<32) * 0x9e3779b97f4a7c15
	return h>>32%earlyOdds == 0
}

// metaEarly is the key of a saved schedule's comment that says whether
// its run had early timers (EnvEarlyTimers), and under which rule: 0
// without, 1 every timer may fire early (schedules made before test
// timers were told apart), 2 a test's own timers never do
// (testtimers.go). A schedule replays only in the mode it was made in,
// and the replay takes the mode from the file, whatever the environment
// says. A file without it was made without.
const metaEarly = "rt.early-timers"

// Modes of metaEarly.
const (
	earlyOff    = "0"
	earlyAll1   = "1"
	earlyTests2 = "2"
)

// ModeComment is the comment line a saved schedule carries: the process's mode of early timers ("rt.early-timers: 2").
func ModeComment() string {
	switch {
	case !earlyFromEnv:
		return metaEarly + ": " + earlyOff
	case earlyLegacy:
		return metaEarly + ": " + earlyAll1
	}
	return metaEarly + ": " + earlyTests2
}

// CheckMode refuses a schedule's mode (meta: its comment lines, key to value) that this build does not know.
func CheckMode(meta map[string]string) error {
	switch v, ok := meta[metaEarly]; {
	case !ok, v == earlyOff, v == earlyAll1, v == earlyTests2:
		return nil
	default:
		return fmt.Errorf("%s: %q: expected %s (no early timers), %s (every timer may fire early) or %s (the test's own timers never do)", metaEarly, v, earlyOff, earlyAll1, earlyTests2)
	}
}

// ReplayMode sets the process's mode to the one a schedule was made in
// (its comments' meta, checked by CheckMode), before any run of the replay
// starts.
func ReplayMode(meta map[string]string) {
	v := meta[metaEarly]
	earlyFromEnv = v == earlyAll1 || v == earlyTests2
	earlyLegacy = v == earlyAll1
}
