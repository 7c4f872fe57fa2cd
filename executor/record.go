package executor

import (
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/traces"
)

// How the built-in executors record.
//
// An event is written where its operation takes effect, as a 24-byte
// traces.Packed, into a buffer:
//
//   - worker w's own buffer (wk[w].rb), written only by w's goroutine,
//     without locks or atomics;
//   - for a goroutine outside the workers that pushes on a queue, the
//     queue's buffer, under the queue's lock it holds anyway;
//   - for the other events of goroutines outside the workers (wakes that
//     push nothing), the outside buffer, under its own mutex.
//
// Buffers go to the Recorder while the executor holds none of its queue
// locks (only the lock of the buffer being handed over):
//
//   - in batches, when the Recorder is a BatchRecorder and no Scheduler is
//     set ("batching"): when a buffer is full, when a worker runs out of
//     work or stops, and before Wait and Close return;
//   - otherwise after each operation, one or two events at a time, as
//     Record(Event) calls. Under a Scheduler this keeps the order in which
//     events reach the Recorder, and so a replay's checksum, a function of
//     the schedule alone.
//
// Before Wait returns, every event of every task it waited for, up to the
// task's end, is in the Recorder (when batching; a late wake of a task
// already DONE may come after). The argument: Wait returns after it saw the
// last of those tasks DONE, so every event that could lead to that is
// ordered before it, and then flushAll takes every buffer:
//
//   - a shared buffer is taken under its lock; an event written into it is
//     written under that same lock, before its effect (a push, under the
//     queue's lock; a wake from outside holds the outside buffer's mutex
//     from its draw to its write);
//   - a worker's buffer is read up to its published count (pub, an atomic
//     the worker stores after writing events and before any effect another
//     goroutine could act on: inside a push's critical section, before a
//     task's end is made known, and, for a CAS another goroutine could act
//     on at once (the end of a poll in WAITING, a wake), under the buffer's
//     mutex together with the CAS, so that flushAll waits for it).
//
// flushAll never waits for a worker to reach any point: a worker busy with
// a task spawned meanwhile does not hold Wait up.

// recCap is the number of events a buffer holds before it is handed to the
// Recorder; recSlack is room for the events a worker writes between two
// points where it can hand its buffer over (at most two per operation).
const (
	recCap   = 256
	recSlack = 8
)

// workerBuf is worker w's buffer. n and the events are written by w alone;
// pub is what flushAll may read of them, under mu; done is what flushAll
// has handed over already.
type workerBuf struct {
	n    int
	buf  *[recCap + recSlack]traces.Packed
	pub  atomic.Int32
	mu   sync.Mutex // held while events leave buf, and by w around a CAS and its event
	done int        // under mu
}

func (r *workerBuf) put(p traces.Packed) {
	if r.buf == nil {
		r.buf = new([recCap + recSlack]traces.Packed)
	}
	r.buf[r.n] = p
	r.n++
}

// sharedBuf is a buffer that several goroutines write into, under l. Many
// goroutines writing at once can make it grow past recCap; then whoever
// syncs next hands it over. It is handed over after l is released: under
// l, it is swapped for the spare and dmu is taken, so that flushAll, which
// also takes l and then dmu, waits for a batch on its way to the Recorder.
type sharedBuf struct {
	l     sync.Locker
	buf   []traces.Packed
	full  atomic.Bool // len(buf) ≥ recCap: sync has work to do
	dmu   sync.Mutex
	spare []traces.Packed // under dmu
}

// put writes p; the caller holds s.l.
func (s *sharedBuf) put(p traces.Packed) {
	if s.buf == nil {
		s.buf = make([]traces.Packed, 0, recCap+recSlack)
	}
	s.buf = append(s.buf, p)
	if len(s.buf) == recCap {
		s.full.Store(true)
	}
}

// handOver hands s's events to the Recorder. The caller holds s.l, which
// handOver releases.
func (b *base) handOver(s *sharedBuf) {
	batch := s.buf
	s.dmu.Lock()
	s.buf, s.spare = s.spare, nil
	s.full.Store(false)
	s.l.Unlock()
	if testHookHandOver != nil {
		testHookHandOver(len(batch))
	}
	b.deliver(batch)
	s.spare = batch[:0]
	s.dmu.Unlock()
}

// nested makes an executor mutex a sync.Locker without yield points (a
// buffer is handed over where no yield point may be).
type nested struct{ m *mutex }

func (n nested) Lock()   { n.m.lockNested() }
func (n nested) Unlock() { n.m.unlock() }

// addQueueBuf makes s the buffer of pushes from outside onto the queue
// guarded by mu.
func (b *base) addQueueBuf(s *sharedBuf, mu *mutex) {
	s.l = nested{mu}
	b.shared = append(b.shared, s)
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
	if b.out.l == nil {
		b.out.l = &b.outMu
		b.shared = append(b.shared, &b.out)
	}
}

// emit writes p, an event of worker w (-1 outside any worker), into its
// buffer. It never calls the Recorder.
func (b *base) emit(w int, p traces.Packed) {
	if w >= 0 {
		b.wk[w].rb.put(p)
		return
	}
	b.outMu.Lock()
	b.out.put(p)
	b.outMu.Unlock()
}

// emitPush writes p, the event of a push by w that holds the lock of the
// queue whose buffer is s, and publishes it: once the lock is released,
// the task may run and finish, and Wait return, at any moment.
func (b *base) emitPush(s *sharedBuf, w int, p traces.Packed) {
	switch {
	case w >= 0:
		r := &b.wk[w].rb
		r.put(p)
		if b.batching() {
			r.pub.Store(int32(r.n))
		}
	case b.batching():
		s.put(p) // under s.l, the queue's lock, held by the caller
	default:
		b.emit(w, p)
	}
}

// publish makes worker w's events so far visible to flushAll. Called
// before w makes known the end of a task.
func (b *base) publish(w int) {
	if w >= 0 && b.batching() {
		r := &b.wk[w].rb
		r.pub.Store(int32(r.n))
	}
}

// sync hands worker w's buffer (or the outside buffer, w = -1) to the
// Recorder if it is due: at once without batching, when full with. Called
// where the executor holds no lock, after an operation that emitted.
func (b *base) sync(w int) {
	if w >= 0 {
		r := &b.wk[w].rb
		if r.n >= recCap || (r.n > 0 && !b.batching()) {
			b.deliverOwn(r)
		}
		return
	}
	b.syncShared(&b.out)
}

// syncPush is sync after emitPush, once the queue's lock is released.
func (b *base) syncPush(s *sharedBuf, w int) {
	if w >= 0 || !b.batching() {
		b.sync(w)
		return
	}
	b.syncShared(s)
}

// syncShared hands s over if it is due.
func (b *base) syncShared(s *sharedBuf) {
	if b.batching() && !s.full.Load() && !b.ended.Load() {
		return // the common case: one load, no lock
	}
	s.l.Lock()
	if len(s.buf) == 0 || (b.batching() && len(s.buf) < recCap && !b.ended.Load()) {
		s.l.Unlock()
		return
	}
	b.handOver(s)
}

// deliverOwn hands worker buffer r over; only its worker calls it.
func (b *base) deliverOwn(r *workerBuf) {
	r.mu.Lock()
	if r.n > r.done {
		b.deliver(r.buf[r.done:r.n])
	}
	r.n, r.done = 0, 0
	r.pub.Store(0)
	r.mu.Unlock()
}

// deliver hands batch to the Recorder.
func (b *base) deliver(batch []traces.Packed) {
	if len(batch) == 0 {
		return
	}
	if b.batch != nil {
		b.batch.RecordPacked(batch)
		return
	}
	for _, p := range batch {
		b.rec.Record(p.Event())
	}
}

// testHookIdle, when set (by tests, before any executor starts), runs as a
// worker is about to hand over its buffer and park: a delay there widens
// the window in which only flushAll makes Wait's trace complete.
var testHookIdle func()

// testHookWoke, likewise, runs between a wake's effect on its task and the
// writing of its event; testHookHandOver between taking a shared buffer's
// events and handing them to the Recorder; testHookWaited in Wait, between
// seeing every task DONE and collecting the buffers.
var (
	testHookWoke, testHookWaited func()
	testHookHandOver             func(events int)
)

// deliverIdle hands over, as worker w goes to sleep, its own buffer and the
// shared ones: when every worker sleeps, every event made so far is in the
// Recorder, even if Wait never returns (a task that is never woken again,
// say).
func (b *base) deliverIdle(w int) {
	b.deliverOwn(&b.wk[w].rb)
	b.deliverShared()
}

// deliverShared hands every shared buffer over, waiting for any batch of
// theirs already on its way.
func (b *base) deliverShared() {
	for _, s := range b.shared {
		s.l.Lock()
		b.handOver(s)
	}
}

// flushAll hands every buffer to the Recorder; Wait calls it (when
// batching) after the last task it waits for is DONE. A worker's buffer is
// read up to what the worker published, under the buffer's mutex; the
// worker goes on meanwhile, writing past it.
func (b *base) flushAll() {
	b.deliverShared()
	for w := range b.wk {
		r := &b.wk[w].rb
		r.mu.Lock()
		if p := int(r.pub.Load()); p > r.done {
			b.deliver(r.buf[r.done:p])
			r.done = p
		}
		r.mu.Unlock()
	}
}
