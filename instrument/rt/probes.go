package rt

import "fmt"

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

// addProbes adds the cases of sw, the select g blocks in.
func (r *run) addProbes(g *gor, sw *selWait) {
	for i := range sw.cases {
		r.probes = append(r.probes, probe{chanCase: sw.cases[i], g: g, sw: sw})
	}
}

// dropProbes removes g's cases.
func (r *run) dropProbes(g *gor) {
	ps := r.probes[:0]
	for _, p := range r.probes {
		if p.g != g {
			ps = append(ps, p)
		}
	}
	clear(r.probes[len(ps):])
	r.probes = ps
}

// markReady numbers a new choice and sets readyAt to its number on every
// goroutine with a case that could complete now (caseReady, written out
// as in selWait.ready), and returns the number.
func (r *run) markReady() uint64 {
	picks++
	n := picks
	for i := range r.probes {
		p := &r.probes[i]
		h := p.h
		if h == nil || p.g.readyAt == n {
			continue
		}
		sh := p.sh
		if p.recv {
			if h.qcount > 0 || h.closed != 0 || h.sendq.first != nil || len(sh.stash) > 0 ||
				p.when != nil && *p.when > 0 && *p.when <= r.now() ||
				len(sh.senders) > 0 && firstLive(sh.senders, &p.sw.sel) != nil {
				p.g.readyAt = n
			}
		} else if h.closed != 0 || h.qcount < h.dataqsiz || h.recvq.first != nil ||
			len(sh.receivers) > 0 && firstLive(sh.receivers, &p.sw.sel) != nil {
			p.g.readyAt = n
		}
	}
	if checkProbes {
		r.verifyProbes(n)
	}
	return n
}
