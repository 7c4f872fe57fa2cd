package pool

import (
	"cmp"
	"slices"
	"sync/atomic"
)

// The analyses that run once a case has ended (progress,
// capacityAcrossResize) sweep the tasks' records in time order. Their
// scratch slices are one sweep, reused from case to case: a case
// allocates none of them.

// sweep holds the scratch slices of one analysis; its contents mean
// nothing between uses. Not safe for concurrent use: an analysis takes
// one (takeSweep) and gives it back when done.
type sweep struct {
	spans   []span
	edges   []edge
	keys    []uint64
	times   []int64
	extra   []int64
	capLog  []capChange
	pending []bool
	weights []int
	queue   []int
	fulls   []int64
	steps   []capStep
}

// spareSweep is one sweep kept between analyses. An atomic swap, not a
// sync.Pool: under control the analyses run on a controlled goroutine,
// where sync's locks are the scheduler's yield points (the overlay), and
// the suite's own bookkeeping must not add any.
var spareSweep atomic.Pointer[sweep]

// takeSweep returns the spare sweep, or a new one if another analysis
// has it.
func takeSweep() *sweep {
	if b := spareSweep.Swap(nil); b != nil {
		return b
	}
	return new(sweep)
}

// give makes b the spare sweep again.
func (b *sweep) give() { spareSweep.Store(b) }

// resize returns s with length n, reusing its array if it is large
// enough; the contents are stale.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// edge is an instant at which a task starts, ends, is submitted or stops
// pending (progress's sweep; capacityAcrossResize's uses starts and ends).
type edge struct {
	at   int64
	id   int
	kind uint8 // edgeStart, edgeEnd, edgeSub, edgePend
}

const (
	edgeStart = iota
	edgeEnd
	edgeSub
	edgePend
)

// sortEdges sorts edges by instant, then id, then kind, and returns keys
// (its scratch, to be passed again). Packed into one number each while
// the instants and ids fit (instants below 2^atBits ns: 2^44 is about
// 4.9 hours; ids below 2^18), the sort compares numbers instead of
// calling a function at each comparison (that was most of the sweep),
// and the edges are read back from the numbers.
func sortEdges(edges []edge, keys []uint64, atBits uint) []uint64 {
	const idBits = 18
	keys = keys[:0]
	for _, e := range edges {
		if e.at < 0 || e.at >= 1<<atBits || e.id >= 1<<idBits {
			slices.SortFunc(edges, func(a, b edge) int {
				return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.id, b.id), cmp.Compare(a.kind, b.kind))
			})
			return keys
		}
		keys = append(keys, uint64(e.at)<<(idBits+2)|uint64(e.id)<<2|uint64(e.kind))
	}
	slices.Sort(keys)
	for i, k := range keys {
		edges[i] = edge{int64(k >> (idBits + 2)), int(k >> 2 & (1<<idBits - 1)), uint8(k & 3)}
	}
	return keys
}
