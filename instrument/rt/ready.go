package rt

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"slices"
)

// The candidates of a choice without a look at every goroutine. pick
// asks, at every choice, which goroutines alive may run: those runnable
// and those blocked on a wait that can end. Asked of each goroutine in
// turn, through its record, its select and each case, that was a third
// of a pool's controlled run. Instead:
//
//   - the ids of the runnable goroutines are a set, kept as their state
//     changes (setRunnable, unsetRunnable);
//   - the cases of the selects goroutines are blocked in are a flat list
//     (probes), each a copy of the case's chanCase (it does not change
//     while the goroutine is blocked), looked at in one loop without
//     calls, which sets the ids of those that can go on in a second set;
//   - a select that a counterpart completed (selState.done) sets the
//     goroutine's id in a third set (run.complete);
//   - the few goroutines blocked on another wait (a flag, a condition)
//     are a short list, asked as before.
//
// The candidates are the ids of either set, in increasing order, which is
// the order of r.alive (ids are given in the order goroutines start), the
// goroutine that chooses first. The package's tests check, at every
// choice, that this gives the candidates that asking every goroutine
// alive gives (checkReady).

// bitset is a set of goroutine ids.
type bitset []uint64

func (s bitset) set(id int)   { s[id>>6] |= 1 << (id & 63) }
func (s bitset) unset(id int) { s[id>>6] &^= 1 << (id & 63) }

// sized returns s with room for ids below n.
func (s bitset) sized(n int) bitset {
	if w := (n + 63) >> 6; len(s) < w {
		s = append(s, make(bitset, w-len(s))...)
	}
	return s
}

// setRunnable marks g runnable (its state is gRunnable).
func (r *run) setRunnable(g *gor) {
	g.state = gRunnable
	r.runnable = r.runnable.sized(g.id + 1)
	r.runnable.set(g.id)
}

// unsetRunnable records that g is runnable no more (blocked or done).
func (r *run) unsetRunnable(g *gor) {
	if g.id>>6 < len(r.runnable) {
		r.runnable.unset(g.id)
	}
}

// probe is one case of a select a goroutine is blocked in.
type probe struct {
	chanCase
	g  *gor
	sw *selWait
}

// noTimer is the when of a case on a channel without a timer.
var noTimer int64

// blocked records the wait of g, which blocks: the cases of its select
// as probes, another wait in the list of others. A case on a nil channel
// never completes: it has no probe. One that is not a receive from a
// timer's channel has when pointing to a zero (no timer), so that
// markReady reads it without a test.
func (r *run) blocked(g *gor) {
	r.unsetRunnable(g)
	sw := g.w.sel
	if sw == nil {
		r.others = append(r.others, g)
		return
	}
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

// unblocked removes what blocked recorded of g, which goes on.
func (r *run) unblocked(g *gor) {
	if g.w.sel == nil {
		if i := slices.Index(r.others, g); i >= 0 {
			r.others = slices.Delete(r.others, i, i+1)
		}
		return
	}
	if g.id>>6 < len(r.selDone) {
		r.selDone.unset(g.id)
	}
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

// probeReady reports whether p's select can go on by p's case.
func (r *run) probeReady(p *probe) bool { return p.canComplete(r, &p.sw.sel) }

// markReady sets r.ready to the ids of the goroutines blocked on a wait
// that can end now but for a select a counterpart completed (r.selDone).
// Most cases of a select cannot: a receive's channel holds no value and
// no sender, a send's has neither room nor receiver, nobody is pending on
// the shadow, no timer is due; that is told without a call nor a branch per
// condition, and the others are decided in full (probeReady).
func (r *run) markReady() {
	n := len(r.gs)
	r.runnable = r.runnable.sized(n)
	r.ready = r.ready.sized(n)
	r.selDone = r.selDone.sized(n)
	ready := r.ready
	clear(ready)
	ps := r.probes
	now := int64(math.MaxInt64) // no timer: none is due
	if r.timerProbes > 0 {
		now = r.now()
	}
	if cap(r.maybe) < len(ps) {
		r.maybe = make([]int32, len(ps), 2*len(ps))
	}
	maybe := r.maybe[:len(ps)]
	k := 0
	for i := range ps {
		p := &ps[i]
		h, sh := p.h, p.sh
		if p.recv {
			if h.Qcount|uint(h.Closed)|uint(uintptr(h.Sendq.First))|uint(len(sh.stash)|len(sh.senders)) == 0 {
				if w := *p.when; w <= 0 || w > now {
					continue
				}
			}
		} else if h.Closed == 0 && h.Qcount >= h.Dataqsiz && uint(uintptr(h.Recvq.First))|uint(len(sh.receivers)) == 0 {
			continue
		}
		maybe[k] = int32(i)
		k++
	}
	for _, i := range maybe[:k] {
		if p := &ps[i]; r.probeReady(p) {
			ready.set(p.g.id)
		}
	}
	for _, g := range r.others {
		if g.w.woken != nil && *g.w.woken || g.w.woken == nil && g.w.ready() {
			ready.set(g.id)
		}
	}
}

// appendCands appends to cands the goroutines but g that may run, in the
// order of their ids.
func (r *run) appendCands(cands []*gor, g *gor) []*gor {
	run, ready, done := r.runnable, r.ready, r.selDone
	for w := range ready {
		m := run[w] | ready[w] | done[w]
		for m != 0 {
			id := w<<6 | bits.TrailingZeros64(m)
			m &= m - 1
			if id != g.id {
				cands = append(cands, r.gs[id])
			}
		}
	}
	return cands
}

// checkReady makes every choice check its candidates against those that
// asking every goroutine alive gives: the package's tests turn it on, and
// EnvCheckReady=1 does for any test binary (a run panics at the first
// choice where they differ, with both lists).
var checkReady = os.Getenv(EnvCheckReady) == "1"

// EnvCheckReady set to 1 checks every choice's candidates (checkReady).
const EnvCheckReady = "EXECSPEC_CHECK_READY"

// verifyCands panics if cands, the candidates but g, are not those
// that asking every goroutine alive gives.
func (r *run) verifyCands(g *gor, cands []*gor) {
	for _, h := range r.others {
		if h.state == gDone || h.w.sel != nil || !slices.Contains(r.alive, h) {
			panic(fmt.Sprintf("execspec/rt: at step %d goroutine %d (state %d) is among the others", r.steps, h.id, h.state))
		}
	}
	for _, p := range r.probes {
		if p.g.state == gDone || p.g.w.sel != p.sw || !slices.Contains(r.alive, p.g) {
			panic(fmt.Sprintf("execspec/rt: at step %d goroutine %d (state %d) has probes", r.steps, p.g.id, p.g.state))
		}
	}
	want := r.want[:0]
	for _, h := range r.alive {
		if h != g && r.canRun(h) {
			want = append(want, h)
		}
	}
	r.want = want
	if !slices.Equal(cands, want) {
		ids := func(gs []*gor) []int {
			var s []int
			for _, h := range gs {
				s = append(s, h.id)
			}
			return s
		}
		panic(fmt.Sprintf("execspec/rt: at step %d the sets give candidates %v, the goroutines alive %v (%d probes, %d others)", r.steps, ids(cands), ids(want), len(r.probes), len(r.others)))
	}
}
