// Package eventbuf holds the buffers in which the built-in executors'
// events travel, as 24-byte traces.Packed, from where they happen to the
// Recorder: a Worker buffer, written by its worker's goroutine alone
// without locks or atomics, a Shared buffer, written by several goroutines
// under a lock, and the Sink both are handed to.
//
// The protocol that says when an executor writes an event, publishes it
// and hands a buffer over, and why Wait then finds every event of the
// tasks it waited for, is the executor's (executor/record.go). This
// package keeps the buffers and what each hand-over holds: a Worker is
// read by others only up to what its worker published, under its Mu; a
// Shared buffer is swapped for its spare under its lock and delivered
// after the lock is released, while a second mutex keeps a concurrent
// Flush waiting for the batch on its way.
package eventbuf

import (
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/traces"
)

// Cap is the number of events a buffer holds before it is handed to the
// Recorder; Slack is room for the events a worker writes between two
// points where it can hand its buffer over (at most two per operation).
const (
	Cap   = 256
	Slack = 8
)

// Sink is where buffers are handed: Batch, when it is set, takes them
// whole; otherwise Rec takes them one Record call per event. Its zero value
// takes nothing and must not be handed a buffer.
type Sink struct {
	Rec   interface{ Record(traces.Event) }
	Batch interface{ RecordPacked(batch []traces.Packed) }
}

// Batching reports whether buffers go to the Sink whole.
func (s *Sink) Batching() bool { return s.Batch != nil }

// deliver hands batch to the Recorder.
func (s *Sink) deliver(batch []traces.Packed) {
	if len(batch) == 0 {
		return
	}
	if s.Batch != nil {
		s.Batch.RecordPacked(batch)
		return
	}
	for _, p := range batch {
		s.Rec.Record(p.Event())
	}
}

// TestHookHandOver, when set (by tests, before any executor starts), runs
// between taking a Shared buffer's events and handing them to the Sink.
var TestHookHandOver func(events int)

// Worker is worker w's buffer. n and the events are written by w alone;
// pub is what Flush may read of them, under Mu; done is what Flush has
// handed over already.
type Worker struct {
	n    int
	buf  *[Cap + Slack]traces.Packed
	pub  atomic.Int32
	Mu   sync.Mutex // held while events leave buf, and by w around a CAS and its event
	done int        // under Mu
}

// Put writes p. Worker w only.
func (r *Worker) Put(p traces.Packed) {
	if r.buf == nil {
		r.buf = new([Cap + Slack]traces.Packed)
	}
	r.buf[r.n] = p
	r.n++
}

// Len returns how many events w wrote since its buffer was last handed
// over. Worker w only.
func (r *Worker) Len() int { return r.n }

// Publish makes the events written so far visible to Flush. Worker w only.
func (r *Worker) Publish() { r.pub.Store(int32(r.n)) }

// Deliver hands the buffer over to s; only its worker calls it.
func (r *Worker) Deliver(s *Sink) {
	r.Mu.Lock()
	if r.n > r.done {
		s.deliver(r.buf[r.done:r.n])
	}
	r.n, r.done = 0, 0
	r.pub.Store(0)
	r.Mu.Unlock()
}

// Flush hands what the worker published, and Flush has not handed over
// yet, to s, under Mu; the worker goes on meanwhile, writing past it. Any
// goroutine.
func (r *Worker) Flush(s *Sink) {
	r.Mu.Lock()
	if p := int(r.pub.Load()); p > r.done {
		s.deliver(r.buf[r.done:p])
		r.done = p
	}
	r.Mu.Unlock()
}

// Shared is a buffer that several goroutines write into, under L. Many
// goroutines writing at once can make it grow past Cap; then whoever
// syncs next hands it over. It is handed over after L is released: under
// L, it is swapped for the spare and dmu is taken, so that a flush, which
// also takes L and then dmu, waits for a batch on its way to the Recorder.
type Shared struct {
	L     sync.Locker
	buf   []traces.Packed
	full  atomic.Bool // len(buf) ≥ Cap: Sync has work to do
	dmu   sync.Mutex
	spare []traces.Packed // under dmu
}

// Put writes p; the caller holds s.L.
func (s *Shared) Put(p traces.Packed) {
	if s.buf == nil {
		s.buf = make([]traces.Packed, 0, Cap+Slack)
	}
	s.buf = append(s.buf, p)
	if len(s.buf) == Cap {
		s.full.Store(true)
	}
}

// HandOver hands s's events to to. The caller holds s.L, which HandOver
// releases.
func (s *Shared) HandOver(to *Sink) {
	batch := s.buf
	s.dmu.Lock()
	s.buf, s.spare = s.spare, nil
	s.full.Store(false)
	s.L.Unlock()
	if TestHookHandOver != nil {
		TestHookHandOver(len(batch))
	}
	to.deliver(batch)
	s.spare = batch[:0]
	s.dmu.Unlock()
}

// Sync hands s over to to if it is due: at once without batching; when
// batching, once s is full or once ended is true (the executor has
// closed: from then on every event goes at once).
func (s *Shared) Sync(to *Sink, ended *atomic.Bool) {
	if to.Batching() && !s.full.Load() && !ended.Load() {
		return // the common case: one load, no lock
	}
	s.L.Lock()
	if len(s.buf) == 0 || (to.Batching() && len(s.buf) < Cap && !ended.Load()) {
		s.L.Unlock()
		return
	}
	s.HandOver(to)
}
