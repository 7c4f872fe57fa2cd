package explore

import (
	"sort"
	"sync/atomic"

	"github.com/execspec/execspec/model"
)

// The compact store (Options.Compact) keeps a state of n packed words as n
// 32-bit indices instead: the state's bits are cut into n pieces of equal
// width (the halves of the bits used, for two words), and each piece is
// interned in a leaf table shared by every state and position, so a state
// of two words takes 8 bytes. This is collapse compression (SPIN's -DCOLLAPSE), the
// one-level case of the tree compression of LTSmin: the states of an
// executor model are products of a few parts (the tasks, the workers, the
// queues) that take far fewer distinct values than there are states, so the
// leaves cost little.
//
// The compact store also keeps no parent per state. A counterexample's
// path is found again by searching each breadth-first level backwards: the
// parent of a state at depth d is the first state of depth d-1, in id
// order, that has it as a successor — the very state a sequential search
// records as its parent — so the counterexamples are the same; rebuilding
// one costs at most one more pass over the states.
//
// For W3 T5 K1 (two words) a state takes 8 bytes of indices plus the hash
// table (4 bytes a slot at a load between 3/8 and 3/4), and the leaves a
// few kilobytes: about 15 bytes per state instead of about 27.

// pieceCuts cuts a state of the given words and bits into words pieces of
// at most 64 bits each: at split (the end of the tasks' fields, whose
// values vary together) when the rest fits in the pieces that remain,
// otherwise into equal widths.
func pieceCuts(words, bits, split int) []uint {
	cuts := make([]uint, words+1)
	if words >= 2 && split > 0 && split <= 64 && bits-split <= 64*(words-1) {
		cuts[1] = uint(split)
		for k := 2; k <= words; k++ {
			cuts[k] = uint(split + (bits-split)*(k-1)/(words-1))
		}
		return cuts
	}
	for k := 0; k <= words; k++ {
		cuts[k] = uint(bits * k / words)
	}
	return cuts
}

// leafStore interns 64-bit words: equal words get equal indices. intern is
// safe for concurrent use between calls to reserve, which is not.
type leafStore struct {
	vals  [][]uint64 // chunks of chunkStates values
	n     atomic.Uint32
	table []uint32 // index+1, 0 empty
	mask  uint32
}

func newLeafStore() *leafStore {
	l := &leafStore{table: make([]uint32, 1<<10)}
	l.mask = uint32(len(l.table) - 1)
	return l
}

func leafHash(v uint64) uint32 {
	v ^= v >> 33
	v *= 0xff51afd7ed558ccd
	v ^= v >> 33
	v *= 0xc4ceb9fe1a85ec53
	v ^= v >> 33
	return uint32(v)
}

func (l *leafStore) val(i uint32) uint64 { return l.vals[i>>chunkShift][i&chunkMask] }

// reserve makes room for more new values: the table stays at most 3/4 full.
func (l *leafStore) reserve(more uint32) {
	n := l.n.Load()
	for int((uint64(n)+uint64(more)+chunkMask)>>chunkShift) > len(l.vals) {
		l.vals = append(l.vals, make([]uint64, chunkStates))
	}
	size := uint64(len(l.table))
	for (uint64(n)+uint64(more))*4 > size*3 {
		size *= 2
	}
	if size == uint64(len(l.table)) {
		return
	}
	l.table = make([]uint32, size)
	l.mask = uint32(size - 1)
	for i := uint32(0); i < n; i++ {
		slot := leafHash(l.val(i)) & l.mask
		for l.table[slot] != 0 {
			slot = (slot + 1) & l.mask
		}
		l.table[slot] = i + 1
	}
}

// intern returns the index of v, adding it if new. Room for it must have
// been reserved.
func (l *leafStore) intern(v uint64) uint32 {
	mine := ^uint32(0)
	for slot := leafHash(v) & l.mask; ; {
		e := atomic.LoadUint32(&l.table[slot])
		if e == 0 {
			if mine == ^uint32(0) {
				mine = l.n.Add(1) - 1
				l.vals[mine>>chunkShift][mine&chunkMask] = v
			}
			if atomic.CompareAndSwapUint32(&l.table[slot], 0, mine+1) {
				return mine
			}
			continue // taken meanwhile: look at it again (mine stays unused if it is v)
		}
		if l.val(e-1) == v {
			return e - 1
		}
		slot = (slot + 1) & l.mask
	}
}

// lookup returns the index of v, if interned.
func (l *leafStore) lookup(v uint64) (uint32, bool) {
	for slot := leafHash(v) & l.mask; ; slot = (slot + 1) & l.mask {
		e := atomic.LoadUint32(&l.table[slot])
		if e == 0 {
			return 0, false
		}
		if l.val(e-1) == v {
			return e - 1, true
		}
	}
}

func (l *leafStore) bytes() int64 {
	return int64(l.n.Load())*8 + int64(len(l.table))*4
}

// searchPath returns the ids from idx back to the initial state, finding
// each parent as the first state of the level above that has the state as a
// successor (see the top of this file).
func (e *explorer) searchPath(idx uint32) []uint32 {
	rev := []uint32{idx}
	words := e.lay.Words()
	cur, next := e.m.Init(), e.m.Init()
	sbuf, buf, want := make([]uint64, words), make([]uint64, words), make([]uint64, words)
	for j := idx; j != 0; {
		d := sort.Search(len(e.levels), func(d int) bool { return e.levels[d] > j }) - 1
		if d < 1 {
			break
		}
		copy(want, e.st.load(j, want))
		found := noParent
		for i := e.levels[d-1]; i < e.levels[d] && found == noParent; i++ {
			e.lay.Unpack(e.st.load(i, sbuf), cur)
			e.m.Next(cur, next, func(step model.Step, nx *model.State, err error) bool {
				if err != nil {
					return true
				}
				if e.sym != nil {
					e.sym.canon(nx)
				}
				if e.lay.Pack(nx, buf) && equalWords(buf, want) {
					found = i
					return false
				}
				return true
			})
		}
		if found == noParent {
			break // cannot happen; replay then reports the counterexample incomplete
		}
		rev = append(rev, found)
		j = found
	}
	return rev
}
