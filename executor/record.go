package executor

import (
	"github.com/execspec/execspec/executor/internal/eventbuf"
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
//
// The buffers themselves (eventbuf.Worker, eventbuf.Shared) and the Sink
// they are handed to are in executor/internal/eventbuf; what is here is
// when the executor writes, publishes and hands over.

// nested makes an executor mutex a sync.Locker without yield points (a
// buffer is handed over where no yield point may be).
type nested struct{ m *mutex }

func (n nested) Lock()   { n.m.lockNested() }
func (n nested) Unlock() { n.m.unlock() }

// addQueueBuf makes s the buffer of pushes from outside onto the queue
// guarded by mu.
func (b *base) addQueueBuf(s *eventbuf.Shared, mu *mutex) {
	s.L = nested{mu}
	b.shared = append(b.shared, s)
}

// batching reports whether events go to the Recorder in batches.
func (b *base) batching() bool { return b.sink.Batching() }

// setRecorder sets r as the recorder, and decides whether it gets batches.
// Called before the workers start, by SetRecorder and SetScheduler.
func (b *base) setRecorder(r Recorder) {
	b.rec, b.sink = r, eventbuf.Sink{Rec: r}
	if br, ok := r.(BatchRecorder); ok && b.sched == nil {
		b.sink.Batch = br
	}
	if b.out.L == nil {
		b.out.L = &b.outMu
		b.shared = append(b.shared, &b.out)
	}
}

// emit writes p, an event of worker w (-1 outside any worker), into its
// buffer. It never calls the Recorder.
func (b *base) emit(w int, p traces.Packed) {
	if w >= 0 {
		b.wk[w].rb.Put(p)
		return
	}
	b.outMu.Lock()
	b.out.Put(p)
	b.outMu.Unlock()
}

// emitPush writes p, the event of a push by w that holds the lock of the
// queue whose buffer is s, and publishes it: once the lock is released,
// the task may run and finish, and Wait return, at any moment.
func (b *base) emitPush(s *eventbuf.Shared, w int, p traces.Packed) {
	switch {
	case w >= 0:
		r := &b.wk[w].rb
		r.Put(p)
		if b.batching() {
			r.Publish()
		}
	case b.batching():
		s.Put(p) // under s.L, the queue's lock, held by the caller
	default:
		b.emit(w, p)
	}
}

// publish makes worker w's events so far visible to flushAll. Called
// before w makes known the end of a task.
func (b *base) publish(w int) {
	if w >= 0 && b.batching() {
		b.wk[w].rb.Publish()
	}
}

// sync hands worker w's buffer (or the outside buffer, w = -1) to the
// Recorder if it is due: at once without batching, when full with. Called
// where the executor holds no lock, after an operation that emitted.
func (b *base) sync(w int) {
	if w >= 0 {
		r := &b.wk[w].rb
		if n := r.Len(); n >= eventbuf.Cap || (n > 0 && !b.batching()) {
			r.Deliver(&b.sink)
		}
		return
	}
	b.out.Sync(&b.sink, &b.ended)
}

// syncPush is sync after emitPush, once the queue's lock is released.
func (b *base) syncPush(s *eventbuf.Shared, w int) {
	if w >= 0 || !b.batching() {
		b.sync(w)
		return
	}
	s.Sync(&b.sink, &b.ended)
}

// testHookIdle, when set (by tests, before any executor starts), runs as a
// worker is about to hand over its buffer and park: a delay there widens
// the window in which only flushAll makes Wait's trace complete.
var testHookIdle func()

// testHookWoke, likewise, runs between a wake's effect on its task and the
// writing of its event; eventbuf.TestHookHandOver between taking a shared
// buffer's events and handing them to the Recorder; testHookWaited in Wait,
// between seeing every task DONE and collecting the buffers.
var testHookWoke, testHookWaited func()

// deliverIdle hands over, as worker w goes to sleep, its own buffer and the
// shared ones: when every worker sleeps, every event made so far is in the
// Recorder, even if Wait never returns (a task that is never woken again,
// say).
func (b *base) deliverIdle(w int) {
	b.wk[w].rb.Deliver(&b.sink)
	b.deliverShared()
}

// deliverShared hands every shared buffer over, waiting for any batch of
// theirs already on its way.
func (b *base) deliverShared() {
	for _, s := range b.shared {
		s.L.Lock()
		s.HandOver(&b.sink)
	}
}

// flushAll hands every buffer to the Recorder; Wait calls it (when
// batching) after the last task it waits for is DONE. A worker's buffer is
// read up to what the worker published, under the buffer's mutex; the
// worker goes on meanwhile, writing past it.
func (b *base) flushAll() {
	b.deliverShared()
	for w := range b.wk {
		b.wk[w].rb.Flush(&b.sink)
	}
}
