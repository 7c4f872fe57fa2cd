package rt

import (
	"time"

	"github.com/execspec/execspec/instrument/rt/internal/rtlayout"
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
// runtime's timer behind the channel (rtlayout.IsTicker); if its offset is
// not found, housekeeping is not recognised and such runs end at the step
// budget as before.

// DefaultQuiet is the zero Config's Quiet.
const DefaultQuiet = time.Minute

// anyTicker reports whether one of the cases receives from a ticker.
func anyTicker(cases []Case) bool {
	for _, c := range cases {
		if rtlayout.IsTicker(c.hc()) {
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
func (r *run) housekeepingHang() (h *HangError, gs []*gor) {
	h = &HangError{Leak: r.mainDone, Steps: r.steps, Quiet: r.cfg.Quiet}
	for _, g := range r.alive {
		if g.state == gDone {
			continue
		}
		if g.house {
			h.Housekeeping = append(h.Housekeeping, g.id)
		}
		gs = append(gs, g)
	}
	return h, gs
}
