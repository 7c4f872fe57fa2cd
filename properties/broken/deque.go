package broken

import (
	"sync/atomic"

	"github.com/execspec/execspec/executor"
)

// deque is a worker's bounded local queue: a ring of atomic slots. The
// owner pushes at the bottom; the owner and thieves take from the top, each
// take claimed with one CAS on top, so an element is taken once. Tokio's
// local queue has the same shape (owner FIFO, thieves at the same end).
//
// With the steal bug, a thief takes from the bottom, the owner's end, with a
// plain load and store instead of a CAS: it races with the owner's push and
// with the owner's take of the last element, and the same task can be taken
// twice (or lost).
type deque struct {
	top    atomic.Int64 // next to take; advanced by CAS
	bottom atomic.Int64 // next free slot; written by the owner (and, with the bug, by thieves)
	buf    []atomic.Pointer[task]
}

func newDeque(capacity int) *deque { return &deque{buf: make([]atomic.Pointer[task], capacity)} }

// push adds t at the bottom, or reports false when the deque is full.
// Owner only.
func (d *deque) push(t *task) bool {
	b := d.bottom.Load()
	if b-d.top.Load() >= int64(len(d.buf)) {
		return false
	}
	d.buf[b%int64(len(d.buf))].Store(t)
	d.bottom.Store(b + 1)
	return true
}

// take removes the task at the top, or returns nil when empty. Owner and
// thieves; the CAS on top is the linearization point.
func (d *deque) take() *task { return d.claim(nil) }

// steal is take for a thief. A thief yields between reading the element and
// claiming it, as a thief that copies a batch does work there: the claim
// must be right whatever the owner does meanwhile. With the CAS it is.
func (d *deque) steal(c *ctl) *task { return d.claim(c) }

// claim is take, yielding to c (when not nil) between the read and the CAS.
func (d *deque) claim(c *ctl) *task {
	for {
		t := d.top.Load()
		b := d.bottom.Load()
		if t >= b {
			return nil
		}
		x := d.buf[t%int64(len(d.buf))].Load()
		if c != nil {
			c.yield(executor.PointSteal)
		}
		if d.top.CompareAndSwap(t, t+1) {
			return x
		}
	}
}

// stealOwnerEnd is the bug: a thief takes the bottom element with a load
// and a store, no CAS, yielding in between as steal does.
func (d *deque) stealOwnerEnd(c *ctl) *task {
	b := d.bottom.Load()
	t := d.top.Load()
	if t >= b {
		return nil
	}
	x := d.buf[(b-1)%int64(len(d.buf))].Load()
	// The record lock is let go here, so that the owner may take meanwhile
	// (the race this bug loses); its take and this one are both recorded.
	c.unlockRec()
	c.yield(executor.PointSteal)
	c.lockRec()
	d.bottom.Store(b - 1)
	return x
}

func (d *deque) empty() bool { return d.top.Load() >= d.bottom.Load() }
