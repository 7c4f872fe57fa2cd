package pool

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execspec/execspec/properties/pool/internal/sweep"
)

// randomRecords is a tracker whose tasks' records (and Resizes) are drawn
// from r, on few instants so that many coincide (as on the wall clock),
// with some of every kind: refused, panicked in Submit, never started,
// still running, Resizes out of order; and the unit of its instants: one
// case in ten has them 2^40 ns apart, too late for sortEdges to pack.
func randomRecords(r *rand.Rand) (*tracker, int64) {
	n := 1 + r.IntN(40)
	ops := make([]Op, n)
	for i := range ops {
		ops[i] = Op{Kind: OpSubmit, Weight: 1 + r.IntN(3)}
	}
	cfg := fast(Config{LazyShrink: r.IntN(2) == 0}).withDefaults()
	w := Workload{Options: Options{Capacity: r.IntN(5)}, Submitters: 2, Rounds: []Round{{Ops: ops}}, CloseEarly: r.IntN(4) == 0}
	tr := newTracker(w, cfg)
	unit := int64(1)
	if r.IntN(10) == 0 {
		unit = 1 << 40
	}
	span := int64(5 + r.IntN(200))
	at := func(after int64) int64 { return after + unit*r.Int64N(span/4+1) }
	for id := range tr.tasks {
		t := &tr.tasks[id]
		if r.IntN(8) == 0 {
			continue // never submitted
		}
		sub := unit * (1 + r.Int64N(span))
		t.submitAt.Store(sub)
		t.returnAt.Store(at(sub))
		switch r.IntN(8) {
		case 0:
			t.verdict.Store(refused)
			continue
		case 1:
			t.verdict.Store(panicked)
			continue
		case 2:
			t.verdict.Store(accepted) // never started
			continue
		}
		t.verdict.Store(accepted)
		start := at(sub)
		t.startAt.Store(start)
		t.runs.Store(1)
		if r.IntN(6) > 0 {
			t.endAt.Store(at(start))
			t.finished.Store(true)
		}
		t.how.Store(int32(1 + r.IntN(3)))
	}
	for range r.IntN(7) {
		call := unit * (1 + r.Int64N(span))
		tr.capLog = append(tr.capLog, capChange{Call: call, At: at(call), Cap: r.IntN(6)})
	}
	if r.IntN(3) > 0 {
		slices.SortFunc(tr.capLog, func(a, b capChange) int { return int(a.At - b.At) })
	}
	if r.IntN(5) == 0 {
		tr.cancelAt.Store(unit * (1 + r.Int64N(span)))
	}
	if r.IntN(4) == 0 {
		tr.closeCallAt.Store(unit * (1 + r.Int64N(span)))
	}
	return tr, unit
}

// sweep.Buf.LongestStall (and StartDelays) find what the definitions do: at each instant, every
// span looked at.
func TestLongestStallIsTheDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	stalls := 0
	for round := range 3000 {
		tr, unit := randomRecords(r)
		ongoing := r.IntN(3) == 0
		cutoff := unit * (1 + r.Int64N(250))
		b := new(sweep.Buf)
		spans := tr.spans(b, cutoff, ongoing)
		capLog := slices.Clone(tr.capLog)
		best, ok, fulls := b.LongestStall(slices.Clone(spans), b.Weights, tr.capacity(), capLog, cutoff)
		wantBest, wantOK, wantFulls := longestStallByScan(tr, spans, capLog, cutoff)
		if ok != wantOK || best != wantBest || !slices.Equal(fulls, wantFulls) {
			t.Fatalf("round %d: longest stall %+v %v, fulls %v; the definition gives %+v %v, fulls %v\nspans %+v\ncapLog %+v", round, best, ok, fulls, wantBest, wantOK, wantFulls, spans, capLog)
		}
		delays, wantDelays := b.StartDelays(spans, b.Weights, tr.capacity(), capLog), startDelaysByScan(tr, spans, capLog)
		slices.Sort(delays)
		slices.Sort(wantDelays)
		if !slices.Equal(delays, wantDelays) {
			t.Fatalf("round %d: start delays %v; the definition gives %v\nspans %+v\ncapLog %+v", round, delays, wantDelays, spans, capLog)
		}
		if ok {
			stalls++
			// progress skips the sweep where the tasks waited no longer
			// than the floor in all: no stall may be longer.
			if bound := sweep.WaitedAtMost(spans, cutoff); best.To-best.From > bound {
				t.Fatalf("round %d: a stall of %d, longer than the %d the tasks waited in all\nspans %+v", round, best.To-best.From, bound, spans)
			}
		}
	}
	if stalls < 500 {
		t.Fatalf("only %d of the cases had a stall: the records are too tame to compare", stalls)
	}
}

// longestStallByScan is the definition LongestStall sweeps for: the
// state at each instant, from every span.
func longestStallByScan(tr *tracker, spans []sweep.Span, capLog []capChange, cutoff int64) (sweep.Stall, bool, []int64) {
	times := []int64{0, cutoff}
	for _, sp := range spans {
		times = append(times, sp.Sub, sp.Pend, sp.Start, sp.End)
	}
	for _, c := range capLog {
		times = append(times, c.At)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	times = slices.DeleteFunc(times, func(t int64) bool { return t > cutoff })
	var search sweep.Search
	for i := 0; i+1 < len(times); i++ {
		t0, t1 := times[i], times[i+1]
		var running int64
		oldest, heaviest := -1, 0
		for id, sp := range spans {
			w := tr.tasks[id].weight
			if sp.Start != 0 && sp.Start <= t0 && t0 < sp.End {
				running += int64(w)
			}
			if sp.Sub != 0 && sp.Sub <= t0 && t0 < sp.Pend {
				heaviest = max(heaviest, w)
				if oldest < 0 || sp.Sub < spans[oldest].Sub {
					oldest = id
				}
			}
		}
		search.Step(t0, t1, oldest, running, heaviest, sweep.CapAt(tr.capacity(), capLog, t0))
	}
	return search.Best, search.OK, search.Fulls
}

// startDelaysByScan is the definition StartDelays sweeps for: each
// started task's submit judged against every span (sweep.AtSubmit).
func startDelaysByScan(tr *tracker, spans []sweep.Span, capLog []capChange) []int64 {
	weights := make([]int, len(tr.tasks))
	for id := range tr.tasks {
		weights[id] = tr.tasks[id].weight
	}
	var all, fit []int64
	for id, sp := range spans {
		if sp.Sub == 0 || sp.Start == 0 {
			continue
		}
		d := sp.Start - sp.Sub
		all = append(all, d)
		running, queued := sweep.AtSubmit(spans, weights, id)
		if c := sweep.CapAt(tr.capacity(), capLog, sp.Sub); !queued && (c <= 0 && running == 0 || c > 0 && running+int64(tr.tasks[id].weight) <= int64(c)) {
			fit = append(fit, d)
		}
	}
	if len(fit) == 0 {
		return all
	}
	return fit
}

// capacityAcrossResize finds what the definition does: at each task's
// start, the weight of every task then running against the largest
// capacity in effect since its submit; the first task by id over it.
func TestCapacityAcrossResizeIsTheDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	found := 0
	for round := range 3000 {
		tr, _ := randomRecords(r)
		got, want := fmt.Sprint(tr.capacityAcrossResize()), fmt.Sprint(capacityByScan(tr))
		if got != want {
			t.Fatalf("round %d: %s; the definition gives %s\ncapLog %+v", round, got, want, tr.capLog)
		}
		if got != "<nil>" {
			found++
		}
	}
	if found < 300 {
		t.Fatalf("only %d cases over the capacity: the records are too tame to compare", found)
	}
}

func capacityByScan(tr *tracker) *Finding {
	c0 := tr.capacity()
	if len(tr.capLog) == 0 || c0 <= 0 {
		return nil
	}
	capAt := func(t int64) int {
		c := c0
		for _, ch := range tr.capLog {
			if ch.Cap > c && ch.Call <= t || ch.At <= t && !tr.cfg.LazyShrink {
				c = ch.Cap
			}
		}
		return c
	}
	for id := range tr.tasks {
		t0, sub := tr.tasks[id].startAt.Load(), tr.tasks[id].submitAt.Load()
		if t0 == 0 || sub == 0 {
			continue
		}
		var n int64
		for j := range tr.tasks {
			s, e := tr.tasks[j].startAt.Load(), tr.tasks[j].endAt.Load()
			if s != 0 && s <= t0 && !(e != 0 && max(s, e) <= t0) {
				n += int64(tr.tasks[j].weight)
			}
		}
		b := capAt(sub)
		for _, ch := range tr.capLog {
			for _, t := range []int64{ch.Call, ch.At} {
				if sub <= t && t <= t0 {
					b = max(b, capAt(t))
				}
			}
		}
		if n > int64(b) {
			return finding(CapacityBound, "Resize", "%d %s at once when task %d started; the capacity in effect since it was submitted was at most %d", n, tr.unit(), id, b)
		}
	}
	return nil
}

// In a testing/synctest bubble (as under control) the case's clock reads
// the wall clock's UnixNano, and gives what time.Since(base) gives; outside
// one it is time.Since on the monotonic clock.
func TestClockIsSince(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &tracker{}
		tr.begin()
		if !tr.wallBase {
			t.Fatal("in a bubble, the case's beginning has a monotonic reading")
		}
		for _, d := range []time.Duration{0, 1, 999, 3 * time.Microsecond, 1500 * time.Millisecond, 7 * time.Hour} {
			time.Sleep(d)
			if got, want := tr.clock(), int64(time.Since(tr.base)); got != want {
				t.Fatalf("after %v more: clock %d, time.Since %d", d, got, want)
			}
		}
	})
	tr := &tracker{}
	tr.begin()
	if tr.wallBase {
		t.Fatal("outside a bubble, the case's beginning has no monotonic reading")
	}
}
