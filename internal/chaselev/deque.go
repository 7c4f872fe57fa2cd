package chaselev

import (
	"fmt"
	"sync/atomic"
)

// Deque is a bounded Chase-Lev deque of int64 values (values from 1; 0
// means "none"). Bottom is the owner end, top the steal end; the live
// elements are buf[top..bottom) modulo the capacity.
//
// Concurrency: Push and Pop may be called by the owner only, one goroutine;
// Steal by any number of thieves concurrently with the owner. Every index
// and slot is an atomic, and Go's atomics are sequentially consistent, so
// the fences of the weak-memory formulation (Lê et al., PPoPP 2013) are
// implied: the store of bottom in Pop is ordered before its load of top,
// which is what makes the last-element race visible to the CAS.
//
// Cost: each operation is O(1) and allocation-free. The zero value is not
// usable; call New or NewRacy.
type Deque struct {
	top    atomic.Int64 // next element to steal; only grows, by CAS (or, in the racy form, a plain store)
	_      [56]byte     // top and bottom on separate cache lines: thieves write top, the owner bottom
	bottom atomic.Int64 // next free slot at the owner end; written by the owner only
	_      [56]byte
	buf    []atomic.Int64
	mask   int64
	racy   bool
}

// New returns an empty deque holding at most capacity elements (rounded up
// to a power of two, at least 2).
func New(capacity int) *Deque { return newDeque(capacity, false) }

// NewRacy returns a deque with the known race: Pop takes the last element
// without a CAS against thieves, so an owner and a thief may both take it.
// For tests of race detection only.
func NewRacy(capacity int) *Deque { return newDeque(capacity, true) }

func newDeque(capacity int, racy bool) *Deque {
	n := 2
	for n < capacity {
		n <<= 1
	}
	return &Deque{buf: make([]atomic.Int64, n), mask: int64(n - 1), racy: racy}
}

// Cap returns the capacity.
func (d *Deque) Cap() int { return len(d.buf) }

// Racy reports whether d is the racy form.
func (d *Deque) Racy() bool { return d.racy }

// Len returns the number of elements; exact only when no thief runs.
func (d *Deque) Len() int {
	n := d.bottom.Load() - d.top.Load()
	return int(max(n, 0))
}

// Push adds x (≥ 1) at the owner end. It returns false, changing nothing,
// when the deque is full (the caller overflows elsewhere). Owner only.
// Synchronizes with Steal: the slot is written before bottom is published,
// so a thief that sees the new bottom sees the value.
func (d *Deque) Push(x int64) bool {
	if x <= 0 {
		panic(fmt.Sprintf("chaselev: Push(%d): values start from 1", x))
	}
	b := d.bottom.Load()
	t := d.top.Load()
	if b-t >= int64(len(d.buf)) {
		return false
	}
	d.buf[b&d.mask].Store(x)
	d.bottom.Store(b + 1)
	return true
}

// Pop removes and returns the element at the owner end, or 0 when the
// deque is empty (or a thief took the last element first). Owner only.
//
// It first claims the bottom slot by lowering bottom, then reads top: a
// thief that read the old bottom may still be about to take the same
// element only when it is the last one (top == b), and that case is settled
// by a CAS on top, the same CAS a thief uses. The racy form skips that CAS
// and stores top — the bug: the thief's CAS can also succeed, and both
// return the element.
func (d *Deque) Pop() int64 {
	b := d.bottom.Load() - 1
	d.bottom.Store(b)
	t := d.top.Load()
	if t > b {
		// Empty: restore bottom.
		d.bottom.Store(b + 1)
		return 0
	}
	x := d.buf[b&d.mask].Load()
	if t < b {
		// More than one element: thieves cannot reach slot b.
		return x
	}
	// The last element: race the thieves for it.
	if d.racy {
		d.top.Store(t + 1) // BUG: no CAS; a thief's concurrent CAS(t, t+1) also succeeds
	} else if !d.top.CompareAndSwap(t, t+1) {
		x = 0 // a thief took it
	}
	d.bottom.Store(b + 1)
	return x
}

// StealResult says how a Steal ended.
type StealResult uint8

// Steal results.
const (
	Stolen StealResult = iota + 1 // the element at the steal end was taken
	Empty                         // the deque was empty
	Abort                         // another thief or the owner won the race: nothing taken, try again
)

// Steal removes and returns the element at the steal end. Any goroutine
// may call it, concurrently with the owner and other thieves. It reads top
// then bottom; if an element is there it reads it and claims it with a CAS
// on top, which fails (Abort) if another thief or the owner's Pop of the
// last element claimed it first.
func (d *Deque) Steal() (int64, StealResult) {
	t := d.top.Load()
	b := d.bottom.Load()
	if t >= b {
		return 0, Empty
	}
	x := d.buf[t&d.mask].Load()
	if !d.top.CompareAndSwap(t, t+1) {
		return 0, Abort
	}
	return x, Stolen
}
