package explore

import "sync/atomic"

// store is the set of visited states of one exploration: packed states in
// insertion order (which is breadth-first order, so the frontier is a range
// of indices and needs no queue of its own), the parent of each, and an
// open-addressing hash table of indices.
//
// Memory per state: the packed words (16 bytes for the reference
// configurations), 4 bytes of parent, and 4 bytes per table slot at a load
// between 3/8 and 3/4. States live in fixed-size chunks so that growing never
// copies them and never needs twice the memory.
//
// The hash only speeds up equality: a lookup compares the packed words, so a
// collision costs time, never a wrong answer.
//
// A store is not safe for concurrent use through insert; the parallel
// explorer (parallel.go) updates the table with atomic operations and
// writes states only between its phases, through reserve and ensure.
type store struct {
	words  int
	chunks [][]uint64 // chunkStates states each
	parent [][]uint32
	n      uint32
	// table holds index+1 in its low idxBits bits (0 = empty) and, above
	// them, the top bits of the state's hash (bit 31 excepted, which the
	// parallel explorer uses to mark a pending claim): a probe compares
	// states only when those tag bits match, so most probes touch only the
	// table.
	table   []uint32
	mask    uint32
	idxBits uint
	idxMask uint32

	// A compact store (compact.go) keeps, instead of chunks and parent,
	// one leaf index per word of each state.
	leaves *leafStore
	roots  [][]uint32
	cuts   []uint // piece k of a state is its bits cuts[k] to cuts[k+1]
}

const (
	chunkShift  = 16
	chunkStates = 1 << chunkShift
	chunkMask   = chunkStates - 1
	noParent    = ^uint32(0)
)

// newStore returns an empty store for states of the given number of words,
// of which bits are used; a compact one if asked.
func newStore(words, bits int, compact bool, split int) *store {
	s := &store{words: words}
	if compact {
		s.leaves = newLeafStore()
		s.cuts = pieceCuts(words, bits, split)
	}
	s.setTable(make([]uint32, 1<<8))
	return s
}

// state returns the packed words of state i in a plain store; the slice
// aliases the store.
func (s *store) state(i uint32) []uint64 {
	c := s.chunks[i>>chunkShift]
	o := int(i&chunkMask) * s.words
	return c[o : o+s.words : o+s.words]
}

// load returns the packed words of state i: in a plain store the stored
// words, in a compact one buf filled with them.
func (s *store) load(i uint32, buf []uint64) []uint64 {
	if s.leaves == nil {
		return s.state(i)
	}
	o := int(i&chunkMask) * s.words
	r := s.roots[i>>chunkShift][o : o+s.words]
	buf = buf[:s.words]
	clear(buf)
	for k, x := range r {
		setBits(buf, s.cuts[k], s.cuts[k+1]-s.cuts[k], s.leaves.val(x))
	}
	return buf
}

// getBits returns the n ≤ 64 bits of w from bit off.
func getBits(w []uint64, off, n uint) uint64 {
	i, b := off/64, off%64
	v := w[i] >> b
	if b+n > 64 && int(i)+1 < len(w) {
		v |= w[i+1] << (64 - b)
	}
	if n < 64 {
		v &= 1<<n - 1
	}
	return v
}

// setBits ors v (n ≤ 64 bits) into w at bit off.
func setBits(w []uint64, off, n uint, v uint64) {
	i, b := off/64, off%64
	w[i] |= v << b
	if b+n > 64 && int(i)+1 < len(w) {
		w[i+1] |= v >> (64 - b)
	}
}

// equal reports whether state i is w.
func (s *store) equal(i uint32, w []uint64) bool {
	if s.leaves == nil {
		return equalWords(s.state(i), w)
	}
	o := int(i&chunkMask) * s.words
	r := s.roots[i>>chunkShift][o : o+s.words]
	for k, x := range r {
		if s.leaves.val(x) != getBits(w, s.cuts[k], s.cuts[k+1]-s.cuts[k]) {
			return false
		}
	}
	return true
}

// put writes w as state i, which ensure has made room for (and, in a
// compact store, leaves.reserve room for its words). Safe for concurrent
// use on distinct i.
func (s *store) put(i uint32, w []uint64) {
	if s.leaves == nil {
		copy(s.state(i), w)
		return
	}
	o := int(i&chunkMask) * s.words
	r := s.roots[i>>chunkShift][o : o+s.words]
	for k := range r {
		r[k] = s.leaves.intern(getBits(w, s.cuts[k], s.cuts[k+1]-s.cuts[k]))
	}
}

// hasParents reports whether the store records each state's parent (a
// compact store does not).
func (s *store) hasParents() bool { return s.leaves == nil }

func (s *store) setParent(i, p uint32) {
	if s.leaves == nil {
		s.parent[i>>chunkShift][i&chunkMask] = p
	}
}

func (s *store) parentOf(i uint32) uint32 { return s.parent[i>>chunkShift][i&chunkMask] }

func hashWords(w []uint64) uint32 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, x := range w {
		h ^= x
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 31
	}
	h *= 0x94d049bb133111eb
	return uint32(h ^ h>>32)
}

func equalWords(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// insert adds the packed state w with the given parent if it is new. It
// returns the state's index and whether it was new.
func (s *store) insert(w []uint64, h uint32, parent uint32) (uint32, bool) {
	tag := h &^ s.idxMask &^ pendingBit
	for slot := h & s.mask; ; slot = (slot + 1) & s.mask {
		e := s.table[slot]
		if e == 0 {
			i := s.add(w, parent)
			s.table[slot] = (i + 1) | tag
			if uint64(s.n)*4 > uint64(len(s.table))*3 {
				s.grow()
			}
			return i, true
		}
		if e&^s.idxMask == tag {
			if i := e&s.idxMask - 1; s.equal(i, w) {
				return i, false
			}
		}
	}
}

// setTable installs t as the table; the index field is as wide as t is
// long (there are fewer states than slots), the rest of the word is tag.
func (s *store) setTable(t []uint32) {
	s.table = t
	s.mask = uint32(len(t) - 1)
	s.idxBits = uint(bitsLen(uint32(len(t))))
	if s.idxBits > 31 {
		s.idxBits = 31
	}
	s.idxMask = uint32(uint64(1)<<s.idxBits - 1)
}

func bitsLen(x uint32) int {
	n := 0
	for x != 0 {
		n++
		x >>= 1
	}
	return n
}

// lookup returns the index of w, if stored.
func (s *store) lookup(w []uint64) (uint32, bool) {
	for slot := hashWords(w) & s.mask; ; slot = (slot + 1) & s.mask {
		e := s.table[slot]
		if e == 0 {
			return 0, false
		}
		if i := e&s.idxMask - 1; s.equal(i, w) {
			return i, true
		}
	}
}

func (s *store) add(w []uint64, parent uint32) uint32 {
	i := s.n
	s.ensure(i + 1)
	if s.leaves != nil {
		s.leaves.reserve(uint32(s.words))
	}
	s.put(i, w)
	s.setParent(i, parent)
	s.n++
	return i
}

func (s *store) grow() {
	s.setTable(make([]uint32, 2*len(s.table)))
	buf := make([]uint64, s.words)
	for i := uint32(0); i < s.n; i++ {
		h := hashWords(s.load(i, buf))
		slot := h & s.mask
		for s.table[slot] != 0 {
			slot = (slot + 1) & s.mask
		}
		s.table[slot] = (i + 1) | h&^s.idxMask&^pendingBit
	}
}

// reserve grows the table, if needed, so that claims more states fit at a
// load of at most 3/4, rehashing the stored states on par goroutines. Not
// safe for concurrent use.
func (s *store) reserve(claims uint32, par int) {
	need := (uint64(s.n) + uint64(claims)) * 4
	size := uint64(len(s.table))
	for need > size*3 {
		size *= 2
	}
	if size == uint64(len(s.table)) {
		return
	}
	s.setTable(make([]uint32, size))
	const span = 1 << 14
	each(par, int((s.n+span-1)/span), nil, func(g, c int) bool {
		lo := uint32(c) * span
		hi := min(lo+span, s.n)
		buf := make([]uint64, s.words)
		for i := lo; i < hi; i++ {
			h := hashWords(s.load(i, buf))
			e := (i + 1) | h&^s.idxMask&^pendingBit
			for slot := h & s.mask; ; slot = (slot + 1) & s.mask {
				if atomic.CompareAndSwapUint32(&s.table[slot], 0, e) {
					break
				}
			}
		}
		return true
	})
}

// ensure allocates room for states up to n (exclusive) without storing any.
func (s *store) ensure(n uint32) {
	if s.leaves != nil {
		for int((n+chunkMask)>>chunkShift) > len(s.roots) {
			s.roots = append(s.roots, make([]uint32, chunkStates*s.words))
		}
		return
	}
	for int((n+chunkMask)>>chunkShift) > len(s.chunks) {
		s.chunks = append(s.chunks, make([]uint64, chunkStates*s.words))
		s.parent = append(s.parent, make([]uint32, chunkStates))
	}
}

// bytes returns the memory the stored states take: their packed words and
// parents, and the table. (The last chunk's unused tail, at most one chunk,
// is not counted.)
func (s *store) bytes() int64 {
	if s.leaves != nil {
		return int64(s.n)*int64(s.words*4) + int64(len(s.table))*4 + s.leaves.bytes()
	}
	return int64(s.n)*int64(s.words*8+4) + int64(len(s.table))*4
}
