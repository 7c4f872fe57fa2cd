package rt

import (
	"reflect"
	"slices"
	"sync/atomic"
	"time"

	"github.com/execspec/execspec/instrument/rt/internal/rtlayout"
)

// The external phase without handovers. When nobody can run, each
// goroutine blocked in a select (a plain send or receive is one) would
// perform its operation for real, in the order of goroutine ids, and the
// phase would end once one of them completed, with every other that
// completed at the same instant (external). Most phases of a pool's run
// only wait for a timer: a task's sleep, a purge's ticker, with nothing
// else in the bubble. Handing control to each blocked goroutine so that
// it can block for real, and back, then cancelling each, was most of the
// phase's cost (four goroutine switches and a settle per goroutine).
//
// waitFirst does the same on the coordinator, where that is the same:
// the run has no uncontrolled goroutine (settleBeforeChoice's foreign),
// no AfterFunc of its own is pending (nothing to adopt), no goroutine
// waits on the standard library's sync (polled), and every case is a
// receive (a send that a channel closed meanwhile panics in its own
// goroutine, not in the coordinator). Then only time can end the waits —
// a timer fires, or an AfterFunc of code that is not rewritten runs
// and, say, closes a channel — and the coordinator waits for the first
// in one real select over their cases, each channel once and for the
// first goroutine that waits on it (the runtime's queues are FIFO, and
// the goroutines would have blocked in the order of their ids); a
// timer's channel, where the runtime's timers can be read, only by a
// timer of the coordinator's own for the earliest of them. At that
// instant it completes, in the order of ids, every other operation that
// can complete without blocking: those that a timer of the same instant
// readied, as their own real selects would have completed. Which
// goroutines complete, with what values, at what virtual time, is what
// the handovers gave: the schedule does not change
// (TestExternalWaitKeepsRuns).
//
// Most phases of a pool can only end by a timer: the channels left once
// the timers' are set aside (a worker's tasks, a pool's context) complete
// only if some goroutine runs, and none can while the others are durably
// blocked until a timer of the bubble's heap fires (a sleep, an
// AfterFunc, a context's deadline). When the bubble says that none is due
// before the earliest the phase knows of (rtlayout's OnlyTime), the phase
// sleeps until then and the sweep completes what can complete: no select
// case is built, no channel locked and waited on, nothing else ran to
// settle, and a send may wait too (nothing can close its channel).

// alwaysLaunch turns waitFirst off, waitsOnCoordinator counts the
// phases it ran, holderPhases those of them that the goroutine holding
// control ran and onlyTimePhases those that waited for a timer alone
// (tests).
var (
	alwaysLaunch       bool
	waitsOnCoordinator atomic.Int64
	holderPhases       atomic.Int64
	onlyTimePhases     atomic.Int64
)

// waitFirst runs the external phase on the coordinator if it can (see
// above) and reports whether it did; the goroutines whose operation
// completed have extOK set.
func (r *run) waitFirst(launched []*gor) bool {
	if alwaysLaunch || alwaysSettle || r.foreign || r.waitAdoption() || r.stdWaits(false) || len(launched) == 0 {
		return false
	}
	// Where the runtime's timers can be read, a receive from a timer's
	// channel is not waited on: the phase wakes when the earliest of
	// them is due (or at the horizon), and the receives below complete
	// those due then, as their real selects would have when it fired.
	// Otherwise, and for every other channel, one real select.
	now := time.Now().UnixNano()
	wait := r.cfg.Horizon
	sc, own := r.extCases[:0], r.extOwn[:0]
	var b *rtlayout.Bubble // of the first channel (a select {} has none)
	recvOnly, oneBubble := true, true
	for _, g := range launched {
		for j, c := range g.w.sel.all {
			h := c.hc()
			if h == nil {
				continue
			}
			hb := h.Bubble()
			if b == nil {
				b = hb
			}
			recvOnly, oneBubble = recvOnly && g.w.sel.cases[j].recv, oneBubble && hb != nil && hb == b
			if when := g.w.sel.cases[j].when; when != nil {
				if w := *when; w > 0 && time.Duration(w-now) < wait {
					wait = time.Duration(w - now)
				}
			} else if !slices.ContainsFunc(own, func(o extOwner) bool { return o.h == h }) {
				own = append(own, extOwner{g, int32(j), h})
			}
		}
	}
	r.extOwn = own[:0]
	onlyTime := oneBubble && b.OnlyTime(now, now+int64(wait))
	if !onlyTime && !recvOnly {
		return false
	}
	waitsOnCoordinator.Add(1)
	if onlyTime { // (above)
		onlyTimePhases.Add(1)
		time.Sleep(wait)
		r.sweep(launched)
		return true
	}
	for _, o := range own {
		sc = append(sc, o.g.w.sel.all[o.j].reflectCase())
	}
	if r.wake == nil {
		r.wake = time.NewTimer(wait)
	} else {
		r.wake.Reset(wait)
	}
	fired := false
	if len(own) == 0 {
		for {
			select {
			case <-r.adoptCh:
				if r.adoptN.Load() == 0 {
					continue // the doorbell of an adoption already made
				}
			case <-r.wake.C:
				fired = true
			}
			break
		}
	} else {
		sc = append(sc,
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(r.adoptCh)},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(r.wake.C)})
		for {
			i, v, ok := reflect.Select(sc)
			if i == len(own) && r.adoptN.Load() == 0 {
				continue
			}
			if i < len(own) {
				o := own[i]
				o.g.w.sel.all[o.j].fromReflect(v, ok)
				o.g.w.sel.extIdx = int(o.j)
				o.g.extOK = true
			}
			fired = i == len(own)+1
			break
		}
	}
	if !fired && !r.wake.Stop() {
		// Fired, not received: with the timers of Go before 1.23 (a module
		// that says so), its value may still be in the channel.
		select {
		case <-r.wake.C:
		default:
		}
	}
	clear(sc)
	r.extCases = sc[:0]
	settle()
	r.sweep(launched)
	return true
}

// sweep completes, in the order of ids, the operations of launched that
// can complete now (extOK), but for the one the phase's select took.
func (r *run) sweep(launched []*gor) {
	r.timeMoved()
	for _, g := range launched {
		// Where the runtime's timers can be read, an operation that
		// cannot complete is known without trying it (isReady reads the
		// channel's descriptor and its timer).
		if g.extOK || timersReadable && !r.isReady(&g.w) {
			continue
		}
		if j := g.w.sel.tryNow(r); j >= 0 {
			g.w.sel.extIdx = j
			g.extOK = true
		}
	}
}

// extOwner is a case of waitFirst's select: the goroutine and its case.
type extOwner struct {
	g *gor
	j int32
	h *hchan
}

// holderPhase runs the external phase on the goroutine holding control,
// which found nobody to run, when waitFirst can run it: the same phase,
// without handing control to the coordinator and back (two goroutine
// switches, none when the goroutine that waited is the one chosen). It
// returns whom to hand control to, or nil to leave the phase to the
// coordinator: waitFirst cannot run it, nothing is blocked in a select,
// or the run is over (a hang, a leak, a bad choice), which the
// coordinator unwinds as always. Meanwhile the coordinator waits; its
// watch for a goroutine blocked outside the scheduler lets the time of
// the phase pass (holding).
func (r *run) holderPhase() *gor {
	if r.aborting || r.live == 0 {
		return nil
	}
	launched := r.toLaunch()
	if len(launched) == 0 {
		return nil
	}
	r.holding.Store(true)
	ok := r.waitFirst(launched)
	r.holding.Store(false)
	if !ok {
		return nil
	}
	holderPhases.Add(1)
	next := r.afterExternal(launched)
	r.endEarly()
	if next == nil && r.aborting {
		return nil
	}
	if next = r.afterPhase(next); r.aborting {
		return nil
	}
	return next
}
