package rt

import (
	"time"
	"unsafe"
)

// Housekeeping. A pool that keeps a periodic goroutine (ants' purge of
// idle workers: a ticker and a select) is never "every goroutine blocked
// with no timer pending": the ticker fires every period, its goroutine
// runs a few steps and waits again. A stuck pool would then run to the
// step budget and be reported as unknown. The scheduler sees past it:
//
//   - a goroutine woken (in the external phase) from a wait that a
//     ticker's channel can end is doing housekeeping, and its steps are
//     not progress until a wait without a ticker ends for it;
//   - every other goroutine's step is progress;
//   - when Config.Quiet of virtual time has passed with no progress while
//     some goroutine that is not doing housekeeping is blocked, the run
//     is a hang (a deadlock, or a leak once the body returned), reported
//     as one with the blocked goroutines and the housekeeping ones named.
//
// A goroutine that housekeeping wakes (a Cond.Broadcast of a purge, a
// send) makes progress again, so a pool that a purge rescues is not a
// hang (its delay is the suite's to judge).
//
// A ticker's channel is told from a timer's by the period of the
// runtime's timer behind the channel (hchan.timer). The field's offset is
// found once, by creating two tickers with known periods and a timer and
// reading where they differ as expected; if it is not found, housekeeping
// is not recognised and such runs end at the step budget as before.

// DefaultQuiet is the zero Config's Quiet.
const DefaultQuiet = time.Minute

// periodOffset is the offset of runtime.timer.period, or -1.
var periodOffset = findPeriodOffset()

func findPeriodOffset() int {
	const p1, p2 = 987654321 * time.Nanosecond, 123456789 * time.Nanosecond
	a, b := time.NewTicker(p1), time.NewTicker(p2)
	c := time.NewTimer(time.Hour)
	defer a.Stop()
	defer b.Stop()
	defer c.Stop()
	ta, tb, tc := timerOf(a.C), timerOf(b.C), timerOf(c.C)
	if ta == nil || tb == nil || tc == nil {
		return -1
	}
	// The runtime's timer is a mutex, state bytes, counters, when and
	// period, then pointers: period lies within its first 64 bytes.
	for off := 8; off <= 56; off += 8 {
		if *(*int64)(unsafe.Add(ta, off)) == int64(p1) && *(*int64)(unsafe.Add(tb, off)) == int64(p2) && *(*int64)(unsafe.Add(tc, off)) == 0 {
			return off
		}
	}
	return -1
}

func timerOf(ch <-chan time.Time) unsafe.Pointer {
	h := hchanOf(unsafe.Pointer(&ch))
	if h == nil {
		return nil
	}
	return h.timer
}

// isTicker reports whether h is the channel of a ticker (a timer with a
// period).
func isTicker(h *hchan) bool {
	if periodOffset < 0 || h == nil || h.timer == nil {
		return false
	}
	return *(*int64)(unsafe.Add(h.timer, periodOffset)) > 0
}

// anyTicker reports whether one of the cases receives from a ticker.
func anyTicker(cases []Case) bool {
	for _, c := range cases {
		if isTicker(c.hc()) {
			return true
		}
	}
	return false
}

// housekeepingOnly is called by the coordinator after an external phase
// woke someone: it reports whether Config.Quiet of virtual time has
// passed with no progress while a goroutine not doing housekeeping is
// blocked.
func (r *run) housekeepingOnly() bool {
	now := time.Now()
	if r.progress != r.markProgress || r.markTime.IsZero() {
		r.markProgress, r.markTime = r.progress, now
		return false
	}
	if now.Sub(r.markTime) < r.cfg.Quiet {
		return false
	}
	for _, g := range r.alive {
		if g.state == gBlocked && !g.house {
			return true
		}
	}
	return false
}

// housekeepingHang is the verdict when housekeepingOnly holds: the
// goroutines blocked, and those doing housekeeping named as such.
func (r *run) housekeepingHang() *HangError {
	h := &HangError{Leak: r.mainDone, Steps: r.steps, Quiet: r.cfg.Quiet}
	for _, g := range r.alive {
		if g.state == gDone {
			continue
		}
		if g.house {
			h.Housekeeping = append(h.Housekeeping, g.id)
		}
		h.gs = append(h.gs, g)
	}
	return h
}
