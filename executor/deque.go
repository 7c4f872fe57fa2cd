package executor

import (
	"sync/atomic"

	"github.com/execspec/execspec/executor/internal/eventbuf"
)

// localq is a worker's bounded local queue: a ring of tasks with an owner
// end (the tail) and a steal end (the head), and the worker's LIFO slot.
//
// Every operation runs under mu. A lock-free Chase-Lev deque was the
// alternative, and was rejected: an event's sequence number must be drawn
// where its queue operation takes effect, so that sorting a trace by Seq
// gives a legal order of queue operations; a CAS on a deque index cannot
// draw a number from the executor's clock in the same atomic step, a
// critical section can. The lock is uncontended unless a thief is at work.
//
// Who calls what: pushTail and popTail only the owner; popHead the owner
// (FIFO owner end) or any thief. The slot is read and written only by the
// owner, written under mu so that a trace's order covers it too.
type localq struct {
	mu   mutex
	buf  []*task
	head int // index of the steal end
	n    int
	slot *task        // the LIFO slot, nil when empty
	size atomic.Int32 // n, readable without mu (emptiness hints, park checks)

	// owner-only counters
	takes   int // successful takes so far
	lifoRun int // takes from the slot in a row
	victim  int // where the next steal looks first

	_ [64]byte // keep neighbouring workers' queues off this cache line
}

func (q *localq) init(capacity int) { q.buf = make([]*task, capacity) }

func (q *localq) full() bool { return q.n == len(q.buf) }

// pushTail appends t at the owner end. Owner only, under mu, not full.
func (q *localq) pushTail(t *task) {
	q.buf[(q.head+q.n)%len(q.buf)] = t
	q.n++
	q.size.Store(int32(q.n))
}

// popTail removes the task at the owner end (LIFO). Owner only, under mu.
func (q *localq) popTail() *task {
	if q.n == 0 {
		return nil
	}
	q.n--
	i := (q.head + q.n) % len(q.buf)
	t := q.buf[i]
	q.buf[i] = nil
	q.size.Store(int32(q.n))
	return t
}

// popHead removes the task at the steal end (FIFO). Owner or thief, under
// mu.
func (q *localq) popHead() *task {
	if q.n == 0 {
		return nil
	}
	t := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	q.size.Store(int32(q.n))
	return t
}

// globalq is the injector queue: FIFO, unbounded, under its own lock.
// Anyone pushes (spawns and wakes from outside the workers, overflow of a
// full local queue); workers pop the head.
type globalq struct {
	mu   mutex
	q    fifoq
	size atomic.Int64
	rb   eventbuf.Shared // events of pushes from outside the workers, under mu
}

func (g *globalq) push(t *task) {
	g.q.push(t)
	g.size.Add(1)
}

func (g *globalq) pop() *task {
	t := g.q.pop()
	if t != nil {
		g.size.Add(-1)
	}
	return t
}
