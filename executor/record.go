package executor

import (
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/traces"
)

// How the built-in executors record.
//
// An event is written where its operation takes effect, as a 24-byte
// traces.Packed, into a buffer: worker w's own buffer (wk[w], written only
// by w's goroutine, so without atomics or locks) or, for events of
// goroutines outside the workers, one buffer under its own mutex. Buffers
// go to the Recorder at points where the executor holds no lock:
//
//   - in batches, when the Recorder is a BatchRecorder and no Scheduler is
//     set: when a buffer is full, before a worker parks, when a worker
//     stops, and before Wait returns;
//   - otherwise after each operation, one or two events at a time, as
//     Record(Event) calls (under a Scheduler this keeps the order in which
//     events reach the Recorder, and so a replay's checksum, a function of
//     the schedule alone).
//
// Before Wait returns, every event of every task it waited for is in the
// Recorder: the events are written before the effects other goroutines act
// on (inside the queue's critical section for a push, before the worker's
// next operation for the rest), and Wait collects the buffers under the
// flush protocol of flushAll.

// recCap is the number of events a buffer holds before it is handed to the
// Recorder; recSlack is room for the events written between two points
// where a buffer can be handed over (at most two per operation).
const (
	recCap   = 256
	recSlack = 8
)

// recBuf is a buffer of packed events.
type recBuf struct {
	n   int
	buf *[recCap + recSlack]traces.Packed
}

func (r *recBuf) put(p traces.Packed) {
	if r.buf == nil {
		r.buf = new([recCap + recSlack]traces.Packed)
	}
	r.buf[r.n] = p
	r.n++
}

// outBuf is the buffer of events from goroutines outside the workers.
type outBuf struct {
	mu sync.Mutex
	recBuf
	full atomic.Bool // n ≥ recCap: sync has work to do
}

// queueBuf is the buffer of events that goroutines outside the workers
// make while they hold a queue's lock mu (pushes on the global queue, when
// batching): written under mu, it needs no lock of its own. full says,
// without mu, that it is due.
type queueBuf struct {
	mu *mutex
	recBuf
	full  atomic.Bool
	spare atomic.Pointer[[recCap + recSlack]traces.Packed] // an empty buffer, or nil
}

// addQueueBuf makes q the buffer of pushes from outside under mu.
func (b *base) addQueueBuf(q *queueBuf, mu *mutex) {
	q.mu = mu
	b.qbufs = append(b.qbufs, q)
}

// emitLocked writes p, an event of worker w, made under the lock of the
// queue whose buffer is q.
func (b *base) emitLocked(q *queueBuf, w int, p traces.Packed) {
	if w >= 0 || !b.batching() {
		b.emit(w, p)
		return
	}
	if q.n == recCap+recSlack {
		b.deliver(&q.recBuf) // not reached: the pusher syncs when full
	}
	q.put(p)
	if q.n == recCap {
		q.full.Store(true)
	}
}

// syncLocked is sync after emitLocked, once q's lock is released. A full
// buffer is swapped for an empty one under the lock and handed over after
// it: the queue's lock is never held while the Recorder works.
func (b *base) syncLocked(q *queueBuf, w int) {
	if w >= 0 || !b.batching() {
		b.sync(w)
		return
	}
	if !q.full.Load() {
		return
	}
	q.mu.lockNested()
	if q.n < recCap { // another pusher got here first
		q.mu.unlock()
		return
	}
	full := q.recBuf
	q.recBuf = recBuf{buf: q.spare.Swap(nil)}
	q.full.Store(false)
	q.mu.unlock()
	b.deliver(&full)
	q.spare.Store(full.buf)
}

// deliverQueueBufs hands over every queue's buffer.
func (b *base) deliverQueueBufs() {
	for _, q := range b.qbufs {
		q.mu.lockNested()
		b.deliver(&q.recBuf)
		q.full.Store(false)
		q.mu.unlock()
	}
}

// batching reports whether events go to the Recorder in batches.
func (b *base) batching() bool { return b.batch != nil }

// setRecorder sets r as the recorder, and decides whether it gets batches.
// Called before the workers start, by SetRecorder and SetScheduler.
func (b *base) setRecorder(r Recorder) {
	b.rec, b.batch = r, nil
	if br, ok := r.(BatchRecorder); ok && b.sched == nil {
		b.batch = br
	}
}

// emit writes p, an event of worker w (-1 outside any worker), into its
// buffer. It may be called under a queue's lock: it never calls the
// Recorder, except when an outside buffer is full, which only many
// goroutines outside the workers emitting at once can make it.
func (b *base) emit(w int, p traces.Packed) {
	if w >= 0 {
		r := &b.wk[w].rb
		if r.n == recCap+recSlack {
			b.deliver(r) // not reached: see recSlack
		}
		r.put(p)
		return
	}
	o := &b.out
	o.mu.Lock()
	b.emitOutLocked(p)
	o.mu.Unlock()
}

// emitOutLocked writes p into the outside buffer; the caller holds its
// mutex.
func (b *base) emitOutLocked(p traces.Packed) {
	o := &b.out
	if o.n == recCap+recSlack {
		b.deliver(&o.recBuf)
	}
	o.put(p)
	if o.n == recCap {
		o.full.Store(true)
	}
}

// sync hands worker w's buffer (or the outside buffer, w = -1) to the
// Recorder if it is due: at once without batching, when full with. Called
// where the executor holds no lock, after an operation that emitted.
func (b *base) sync(w int) {
	if w >= 0 {
		r := &b.wk[w].rb
		if r.n >= recCap || (r.n > 0 && !b.batching()) {
			b.deliver(r)
		}
		return
	}
	o := &b.out
	if b.batching() && !o.full.Load() {
		return // the common case: one load, no lock
	}
	o.mu.Lock()
	if o.n >= recCap || (o.n > 0 && !b.batching()) {
		b.deliver(&o.recBuf)
	}
	o.mu.Unlock()
}

// deliver hands the events of r to the Recorder and empties r.
func (b *base) deliver(r *recBuf) {
	if r.n == 0 {
		return
	}
	if b.batch != nil {
		b.batch.RecordPacked(r.buf[:r.n])
	} else {
		for i := range r.n {
			b.rec.Record(r.buf[i].Event())
		}
	}
	r.n = 0
	if r == &b.out.recBuf && b.out.full.Load() {
		b.out.full.Store(false)
	}
}

// testHookIdle, when set (by tests, before any executor starts), runs as a
// worker is about to hand over its buffer and park: a delay there widens
// the window in which only flushAll makes Wait's trace complete.
var testHookIdle func()

// testHookWoke, likewise, runs between a wake's effect on its task and the
// writing of its event.
var testHookWoke func()

// deliverIdle hands over, as worker w goes to sleep, its own buffer and
// those of goroutines outside the workers: when every worker sleeps, every
// event made so far is in the Recorder, even if Wait never returns (a task
// that is never woken again, say).
func (b *base) deliverIdle(w int) {
	b.deliver(&b.wk[w].rb)
	o := &b.out
	o.mu.Lock()
	b.deliver(&o.recBuf)
	o.mu.Unlock()
	b.deliverQueueBufs()
}

// serveFlush is called by worker w between operations: if Wait asked for
// the buffers since w last looked, w hands its buffer over and says so.
func (b *base) serveFlush(w int) {
	l := &b.wk[w]
	req := b.flushReq.Load()
	if req == l.acked {
		return
	}
	b.deliver(&l.rb)
	b.lot.mu.Lock()
	l.acked = req
	b.lot.flushed.Broadcast()
	b.lot.mu.Unlock()
}

// flushAll hands every buffer to the Recorder; Wait calls it (when
// batching) after the last task it waits for is DONE. Worker buffers are
// written without synchronization, so only their owner may hand them over,
// or someone who knows the owner is blocked: flushAll asks every worker
// (flushReq) and waits until each has answered (serveFlush, at its next
// operation) or is parked. A parked worker sleeps on the lot's condition
// variable, so while flushAll holds the lot's mutex it cannot wake up, and
// flushAll hands over its buffer itself.
func (b *base) flushAll() {
	o := &b.out
	o.mu.Lock()
	b.deliver(&o.recBuf)
	o.mu.Unlock()
	b.deliverQueueBufs()
	if !b.started.Load() {
		return
	}
	req := b.flushReq.Add(1)
	l := &b.lot
	l.mu.Lock()
	for {
		waiting := false
		for w := range b.wk {
			x := &b.wk[w]
			switch {
			case x.acked >= req:
			case x.parked || x.gone:
				b.deliver(&x.rb)
				x.acked = req
			default:
				waiting = true
			}
		}
		if !waiting {
			break
		}
		l.flushed.Wait()
	}
	l.mu.Unlock()
}
