// Package sweep finds what the pool suite's progress and capacity
// properties ask of one case's records, sweeping the tasks' instants in
// time order once: the longest stall (a stretch of time during which the
// pool had room and some task was pending), the instants at which the
// pool ran at its capacity, the tasks' start delays; and the sorted
// edges (SortEdges) from which the suite has the weight running at each
// start. The records are Spans (a task's submit, the end of its
// wait, its start and end; 0: never), the tasks' weights, and the
// Resizes. properties/pool reads its trackers into them and states the
// properties (progress.go, run.go); this package holds the algorithms,
// each tested there against its definition (a scan of every span at
// each instant).
package sweep

import (
	"cmp"
	"slices"
	"sync/atomic"
)

// Resize is one Resize of the pool: called at Call, returned at At, to
// the capacity Cap.
type Resize struct {
	Call, At int64
	Cap      int
}

// Step is the capacity in effect from an instant on.
type Step struct {
	At  int64
	Cap int
}

// Stall is a stretch of time [From, To) during which the pool had room
// and some task was pending: Task is the oldest pending at its end, when
// Running (tasks or weight) ran with the capacity Cap in effect.
type Stall struct {
	From, To int64
	Task     int
	Running  int64
	Cap      int
}

// Buf holds the scratch slices of one analysis, reused from case to
// case (a case allocates none of them); its contents mean nothing
// between uses. Not safe for concurrent use: an analysis takes one
// (Take) and gives it back when done (Give).
type Buf struct {
	Spans   []Span   // the caller's, for the spans it reads
	Weights []int    // the caller's, for the tasks' weights
	CapLog  []Resize // the caller's, for the Resizes it reads
	Steps   []Step   // the caller's
	Edges   []Edge   // LongestStall's sorted edges, which StartDelays reads; the caller's otherwise
	Keys    []uint64 // SortEdges' scratch
	times   []int64
	extra   []int64
	pending []bool
	byW     []int
	queue   []int
	fulls   []int64
}

// spare is one Buf kept between analyses. An atomic swap, not a
// sync.Pool: under control the analyses run on a controlled goroutine,
// where sync's locks are the scheduler's yield points (the overlay), and
// the suite's own bookkeeping must not add any.
var spare atomic.Pointer[Buf]

// Take returns the spare Buf, or a new one if another analysis
// has it.
func Take() *Buf {
	if b := spare.Swap(nil); b != nil {
		return b
	}
	return new(Buf)
}

// Give makes b the spare Buf again.
func (b *Buf) Give() { spare.Store(b) }

// Sized returns s with length n, reusing its array if it is large
// enough; the contents are stale.
func Sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Edge is an instant at which a task starts, ends, is submitted or stops
// pending (LongestStall; the capacity across Resizes uses starts and
// ends).
type Edge struct {
	At   int64
	ID   int
	Kind uint8 // Start, End, Sub, Pend
}

// The kinds of Edge.
const (
	Start = iota
	End
	Sub
	Pend
)

// SortEdges sorts edges by instant, then id, then kind, and returns keys
// (its scratch, to be passed again). Packed into one number each while
// the instants and ids fit (instants below 2^atBits ns: 2^44 is about
// 4.9 hours; ids below 2^18), the sort compares numbers instead of
// calling a function at each comparison (that was most of the sweep),
// and the edges are read back from the numbers.
func SortEdges(edges []Edge, keys []uint64, atBits uint) []uint64 {
	const idBits = 18
	keys = keys[:0]
	for _, e := range edges {
		if e.At < 0 || e.At >= 1<<atBits || e.ID >= 1<<idBits {
			slices.SortFunc(edges, func(a, b Edge) int {
				return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Kind, b.Kind))
			})
			return keys
		}
		keys = append(keys, uint64(e.At)<<(idBits+2)|uint64(e.ID)<<2|uint64(e.Kind))
	}
	slices.Sort(keys)
	for i, k := range keys {
		edges[i] = Edge{int64(k >> (idBits + 2)), int(k >> 2 & (1<<idBits - 1)), uint8(k & 3)}
	}
	return keys
}

// Span is one task's record as the pool suite's progress reads it:
// submitted at Sub, pending until Pend, running from Start until End (0:
// never; a task still running ends at the cutoff).
type Span struct{ Sub, Pend, Start, End int64 }

// WaitedAtMost bounds the longest stall up to cutoff: the tasks' waits
// (from submit to pend) up to cutoff, summed. A stall is a stretch of
// time during which some task is pending, each instant of it within a
// wait, so it is no longer than their union, and that no longer than
// the sum: with no more than the floor waited in all, no stall can be
// longer than the floor, and LongestStall is not needed.
func WaitedAtMost(spans []Span, cutoff int64) int64 {
	var sum int64
	for _, sp := range spans {
		if sp.Sub != 0 && sp.Sub < cutoff && sp.Pend > sp.Sub {
			sum += min(sp.Pend, cutoff) - sp.Sub
		}
	}
	return sum
}

// LongestStall finds the longest stall up to cutoff, and the instants
// (in order) at which the pool ran at its capacity.
//
// Between two successive instants of the case (any span's ends, a
// Resize's return, 0 and the cutoff) the state is constant; at instant
// t0 a task runs if start <= t0 < end and is pending if sub <= t0 < pend.
// One sweep over the spans' ends in time order finds the state at each
// (a case of hundreds of tasks has a thousand instants: a scan of every
// span at each would be most of the suite's time per case). The
// instants are those of the sorted edges, merged with the few values no
// edge stands for (an empty span's, the Resizes'): one sort, not two. A
// task that starts stops pending at the same instant, so its start
// edge stands for both (a quarter fewer edges to sort); a pending task
// is taken off where the sweep reaches its start or its pend edge, and
// only the order of the submits among one instant's edges matters (the
// queue), which is that of the ids either way.
func (b *Buf) LongestStall(spans []Span, weight []int, c0 int, capLog []Resize, cutoff int64) (Stall, bool, []int64) {
	n := len(spans)
	edges := slices.Grow(b.Edges[:0], 3*n)
	extra := append(b.extra[:0], 0, cutoff)
	for id, sp := range spans {
		started := sp.Start != 0 && sp.End > sp.Start
		if started {
			edges = append(edges, Edge{sp.Start, id, Start}, Edge{sp.End, id, End})
		} else {
			extra = append(extra, sp.Start, sp.End)
		}
		switch {
		case sp.Sub == 0 || sp.Pend <= sp.Sub:
			extra = append(extra, sp.Sub, sp.Pend)
		case started: // pend is start: the start edge stands for it
			edges = append(edges, Edge{sp.Sub, id, Sub})
		default:
			edges = append(edges, Edge{sp.Sub, id, Sub}, Edge{sp.Pend, id, Pend})
		}
	}
	inOrder := true // capLog in order of return, as resize appends it
	for i, c := range capLog {
		extra = append(extra, c.At)
		inOrder = inOrder && (i == 0 || capLog[i-1].At <= c.At)
	}
	b.Keys = SortEdges(edges, b.Keys, 44)
	slices.Sort(extra)
	b.Edges, b.extra = edges, extra
	// The instants up to the cutoff: both lists merged, each once.
	times := b.times[:0]
	for i, j := 0, 0; i < len(edges) || j < len(extra); {
		var t int64
		if j == len(extra) || i < len(edges) && edges[i].At <= extra[j] {
			t, i = edges[i].At, i+1
		} else {
			t, j = extra[j], j+1
		}
		if t > cutoff {
			break
		}
		if len(times) == 0 || times[len(times)-1] != t {
			times = append(times, t)
		}
	}
	b.times = times
	maxW := 0
	for _, w := range weight {
		maxW = max(maxW, w)
	}
	pending := Sized(b.pending, n)
	clear(pending)
	byW := Sized(b.byW, maxW+1) // pending tasks by weight
	clear(byW)
	queue := b.queue[:0] // pending tasks in the order of their sub (then id): the oldest is the first still pending
	head := 0
	b.pending, b.byW = pending, byW
	var running int64
	heaviest := 0 // the largest weight pending
	next := 0
	returned := 0 // capLog[:returned] returned at or before t0 (inOrder)
	search := Search{Fulls: b.fulls[:0]}
	for i := 0; i+1 < len(times); i++ {
		t0, t1 := times[i], times[i+1]
		for ; next < len(edges) && edges[next].At <= t0; next++ {
			e := edges[next]
			w := weight[e.ID]
			switch e.Kind {
			case Start:
				running += int64(w)
				fallthrough
			case Pend:
				if pending[e.ID] {
					pending[e.ID] = false
					byW[w]--
					for heaviest > 0 && byW[heaviest] == 0 {
						heaviest--
					}
				}
			case End:
				running -= int64(w)
			case Sub:
				pending[e.ID] = true
				queue = append(queue, e.ID)
				byW[w]++
				heaviest = max(heaviest, w)
			}
		}
		for head < len(queue) && !pending[queue[head]] {
			head++
		}
		oldest := -1
		if head < len(queue) {
			oldest = queue[head]
		}
		var c int
		if inOrder {
			for returned < len(capLog) && capLog[returned].At <= t0 {
				returned++
			}
			c = c0
			if returned > 0 {
				c = capLog[returned-1].Cap
			}
		} else {
			c = CapAt(c0, capLog, t0)
		}
		search.Step(t0, t1, oldest, running, heaviest, c)
	}
	b.queue, b.fulls = queue[:0], search.Fulls
	return search.Best, search.OK, search.Fulls
}

// Search follows the stalls from instant to instant: the longest
// (best, if ok), the one going on (cur, if inCur), and the instants at
// which the pool ran at its capacity (fulls, in order).
type Search struct {
	Best  Stall
	OK    bool
	Fulls []int64
	cur   Stall
	inCur bool
}

// Step takes the state over [t0, t1): the oldest pending task (-1: none),
// the weight running, the heaviest pending, the capacity in effect. The
// pool has room when the capacity less the weight running is at least
// the heaviest pending weight, or, with no capacity, when nothing runs.
func (s *Search) Step(t0, t1 int64, oldest int, running int64, heaviest, c int) {
	if c > 0 && running >= int64(c) {
		s.Fulls = append(s.Fulls, t0)
	}
	if !(oldest >= 0 && (c > 0 && int64(c)-running >= int64(heaviest) || c <= 0 && running == 0)) {
		s.inCur = false
		return
	}
	if !s.inCur {
		s.cur, s.inCur = Stall{From: t0}, true
	}
	s.cur.To, s.cur.Task, s.cur.Running, s.cur.Cap = t1, oldest, running, c
	if !s.OK || s.cur.To-s.cur.From > s.Best.To-s.Best.From {
		s.Best, s.OK = s.cur, true
	}
}

// StartDelays returns the start delays (start less submit) of the tasks
// that found room and no task waiting when they were submitted, or, if
// none did, of every task that started; in no particular order. b.Edges
// are LongestStall's, sorted.
//
// A task is judged at its submit instant q: running are the tasks with
// start <= q < end, waiting those (itself excepted) with sub < q < pend.
// The sweep over the edges has both at each submit edge, every edge at or
// before q applied: the tasks pending are those with sub <= q < pend, of
// which those submitted at q itself (the submit edges at q, itself among
// them) had not waited. A task with no submit edge (it started at the
// instant of its submit, as the wall clock may have it) is judged by a
// pass over every span.
func (b *Buf) StartDelays(spans []Span, weight []int, c0 int, capLog []Resize) []int64 {
	var all, fit []int64
	judge := func(id int, running int64, queued bool) {
		sp := spans[id]
		d := sp.Start - sp.Sub
		all = append(all, d)
		if c := CapAt(c0, capLog, sp.Sub); !queued && (c <= 0 && running == 0 || c > 0 && running+int64(weight[id]) <= int64(c)) {
			fit = append(fit, d)
		}
	}
	edges := b.Edges
	pending := Sized(b.pending, len(spans))
	clear(pending)
	b.pending = pending
	var running int64
	waiting := 0
	for i := 0; i < len(edges); {
		q := edges[i].At
		k, submits := i, 0
		for ; k < len(edges) && edges[k].At == q; k++ {
			e := edges[k]
			w := int64(weight[e.ID])
			switch e.Kind {
			case Start:
				running += w
				fallthrough
			case Pend:
				if pending[e.ID] {
					pending[e.ID] = false
					waiting--
				}
			case End:
				running -= w
			case Sub:
				pending[e.ID] = true
				waiting++
				submits++
			}
		}
		for _, e := range edges[i:k] {
			if e.Kind == Sub && spans[e.ID].Start != 0 {
				judge(e.ID, running, waiting > submits)
			}
		}
		i = k
	}
	for id, sp := range spans {
		if sp.Sub == 0 || sp.Start == 0 || sp.Pend > sp.Sub {
			continue // not started, or judged above
		}
		running, queued := AtSubmit(spans, weight, id)
		judge(id, running, queued)
	}
	if len(fit) == 0 {
		return all
	}
	return fit
}

// AtSubmit is what task id found at its submit, by a pass over every
// span: the weight running, and whether another task was waiting.
func AtSubmit(spans []Span, weight []int, id int) (running int64, queued bool) {
	q := spans[id].Sub
	for j, o := range spans {
		if o.Start != 0 && o.Start <= q && q < o.End {
			running += int64(weight[j])
		}
		queued = queued || j != id && o.Sub != 0 && o.Sub < q && q < o.Pend
	}
	return running, queued
}

// CapAt is the capacity in effect at t as progress counts it (from c0,
// each Resize from its return): that of the last Resize in the log that
// had returned by t.
func CapAt(c0 int, capLog []Resize, t int64) int {
	c := c0
	for _, ch := range capLog {
		if ch.At <= t {
			c = ch.Cap
		}
	}
	return c
}
