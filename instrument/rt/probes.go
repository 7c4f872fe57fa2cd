package rt

import (
	"fmt"
	"math"
)

// Probes: the readiness of the goroutines blocked in a select, at every
// choice, in one pass over a flat list of their cases. pick asks it of
// every goroutine alive, at every choice; most are blocked in a select
// (idle workers, a sleep's timer, a housekeeper's ticker and done
// channel), and following each one's record to its select and to each
// case, through a call, was a third of a pool's controlled run. The list
// holds a copy of each case's chanCase, which does not change while the
// goroutine is blocked; markReady gives the answer of selWait.ready for
// every such goroutine but for its sel.done, which pick reads
// (TestProbesAgree checks that at every choice of a pool's runs).

// picks numbers the choices of the process's runs, one run at a time: a
// goroutine's readyAt from an earlier run (a record used again) never
// equals a later number.
var picks uint64

// checkProbes makes every choice check the probes' answers against
// selWait.ready (the package's tests turn it on).
var checkProbes bool

// verifyProbes panics if the probes' answer for a goroutine blocked in a
// select differs from selWait.ready's at choice n.
func (r *run) verifyProbes(n uint64) {
	for _, h := range r.alive {
		if sw := h.w.sel; h.state == gBlocked && sw != nil {
			if got, want := sw.sel.done || h.readyAt == n, sw.ready(r); got != want {
				panic(fmt.Sprintf("execspec/rt: the probes say goroutine %d can go on: %v, its select says %v (choice %d, %d probes)", h.id, got, want, n, len(r.probes)))
			}
		}
	}
}

// probe is one case of a select a goroutine is blocked in.
type probe struct {
	chanCase
	g  *gor
	sw *selWait
}

// addProbes adds the cases of sw, the select g blocks in. A case on a nil
// channel never completes: it has no probe. One that is not a receive
// from a timer's channel has when pointing to a zero (no timer), so that
// markReady reads it without a test.
func (r *run) addProbes(g *gor, sw *selWait) {
	for i := range sw.cases {
		c := sw.cases[i]
		if c.h == nil {
			continue
		}
		if c.when == nil {
			c.when = &noTimer
		} else {
			r.timerProbes++
		}
		r.probes = append(r.probes, probe{chanCase: c, g: g, sw: sw})
	}
}

// noTimer is the when of a case on a channel without a timer.
var noTimer int64

// probeReady reports whether p's case can complete now, as caseReady.
func (r *run) probeReady(p *probe) bool {
	h, sh := p.h, p.sh
	if p.recv {
		return h.qcount > 0 || h.closed != 0 || h.sendq.first != nil || len(sh.stash) > 0 ||
			*p.when > 0 && *p.when <= r.now() ||
			len(sh.senders) > 0 && firstLive(sh.senders, &p.sw.sel) != nil
	}
	return h.closed != 0 || h.qcount < h.dataqsiz || h.recvq.first != nil ||
		len(sh.receivers) > 0 && firstLive(sh.receivers, &p.sw.sel) != nil
}

// dropProbes removes g's cases.
func (r *run) dropProbes(g *gor) {
	ps := r.probes[:0]
	for _, p := range r.probes {
		if p.g != g {
			ps = append(ps, p)
		} else if p.when != &noTimer {
			r.timerProbes--
		}
	}
	clear(r.probes[len(ps):])
	r.probes = ps
}

// markReady numbers a new choice and sets readyAt to its number on every
// goroutine with a case that could complete now (caseReady, as
// selWait.ready asks it), and returns the number. Most cases cannot: a
// receive's channel holds no value and no sender, a send's has neither
// room nor receiver, nobody is pending on the shadow, and no timer is due;
// that is told without a branch per condition, and the others are
// decided in full (probeReady).
func (r *run) markReady() uint64 {
	picks++
	n := picks
	ps := r.probes
	now := int64(math.MaxInt64) // no timer: none is due
	if r.timerProbes > 0 {
		now = r.now()
	}
	// One loop without calls finds the cases that may be ready; a second
	// decides them.
	if cap(r.maybe) < len(ps) {
		r.maybe = make([]int32, len(ps), 2*len(ps))
	}
	maybe := r.maybe[:len(ps)]
	k := 0
	for i := range ps {
		p := &ps[i]
		h, sh := p.h, p.sh
		if p.recv {
			if h.qcount|uint(h.closed)|uint(uintptr(h.sendq.first))|uint(len(sh.stash)|len(sh.senders)) == 0 {
				if w := *p.when; w <= 0 || w > now {
					continue
				}
			}
		} else if h.closed == 0 && h.qcount >= h.dataqsiz && uint(uintptr(h.recvq.first))|uint(len(sh.receivers)) == 0 {
			continue
		}
		maybe[k] = int32(i)
		k++
	}
	for _, i := range maybe[:k] {
		if p := &ps[i]; p.g.readyAt != n && r.probeReady(p) {
			p.g.readyAt = n
		}
	}
	if checkProbes {
		r.verifyProbes(n)
	}
	return n
}
