package eventbuf

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/execspec/execspec/traces"
)

// log is a Sink's recorder that keeps the sequence numbers it was given
// and how: in batches or one at a time.
type log struct {
	seqs             []uint64
	batches, singles int
}

func (l *log) Record(e traces.Event) { l.seqs = append(l.seqs, e.Seq); l.singles++ }

func (l *log) RecordPacked(b []traces.Packed) {
	for _, p := range b {
		l.seqs = append(l.seqs, p.Event().Seq)
	}
	l.batches++
}

func ev(seq uint64) traces.Packed { return traces.PackedEvent(traces.KindPark, seq, 0, 0) }

// Flush hands over only what the worker published, once; Deliver then
// hands over the rest and empties the buffer.
func TestWorkerFlushPublishedOnly(t *testing.T) {
	var l log
	s := &Sink{Rec: &l, Batch: &l}
	var r Worker
	r.Put(ev(1))
	r.Put(ev(2))
	r.Publish()
	r.Put(ev(3))
	r.Flush(s)
	r.Flush(s)
	if !slices.Equal(l.seqs, []uint64{1, 2}) || l.batches != 1 {
		t.Fatalf("after two flushes: %v in %d batches, want [1 2] in 1", l.seqs, l.batches)
	}
	r.Deliver(s)
	if !slices.Equal(l.seqs, []uint64{1, 2, 3}) || r.Len() != 0 {
		t.Fatalf("after Deliver: %v, %d left; want [1 2 3], 0 left", l.seqs, r.Len())
	}
	r.Put(ev(4))
	r.Publish()
	r.Flush(s)
	if !slices.Equal(l.seqs, []uint64{1, 2, 3, 4}) {
		t.Fatalf("after a second round: %v, want [1 2 3 4]", l.seqs)
	}
}

// A shared buffer waits for Cap events when batching, goes at once when
// not, and goes at once, whatever it holds, after the end.
func TestSharedSyncWhenDue(t *testing.T) {
	var ended atomic.Bool
	var l log
	batch := &Sink{Rec: &l, Batch: &l}
	s := Shared{L: &sync.Mutex{}}
	for i := range Cap - 1 {
		s.L.Lock()
		s.Put(ev(uint64(i)))
		s.L.Unlock()
		s.Sync(batch, &ended)
	}
	if len(l.seqs) != 0 {
		t.Fatalf("%d events handed over before the buffer was full", len(l.seqs))
	}
	s.L.Lock()
	s.Put(ev(Cap - 1))
	s.L.Unlock()
	s.Sync(batch, &ended)
	if len(l.seqs) != Cap || l.batches != 1 {
		t.Fatalf("%d events in %d batches once full, want %d in 1", len(l.seqs), l.batches, Cap)
	}

	ended.Store(true)
	s.L.Lock()
	s.Put(ev(Cap))
	s.L.Unlock()
	s.Sync(batch, &ended)
	if len(l.seqs) != Cap+1 {
		t.Fatalf("after the end an event waited: %d handed over, want %d", len(l.seqs), Cap+1)
	}

	var one log
	ended.Store(false)
	single := &Sink{Rec: &one}
	s.L.Lock()
	s.Put(ev(7))
	s.Put(ev(8))
	s.L.Unlock()
	s.Sync(single, &ended)
	if !slices.Equal(one.seqs, []uint64{7, 8}) || one.singles != 2 || one.batches != 0 {
		t.Fatalf("without batching: %v, %d singles, %d batches; want [7 8] one at a time", one.seqs, one.singles, one.batches)
	}
}
