package traces

import (
	"cmp"
	"slices"
	"sync"
)

// logShards is the number of independently locked buffers of a Log.
const logShards = 16

// Log is a Recorder that keeps every event in memory. Record and
// RecordPacked are safe to call from any number of goroutines at once;
// Events returns the events ordered by Seq.
//
// The built-in executors hand a Log their events in batches of Packed
// (RecordPacked: one lock and one copy per batch, 24 bytes per event);
// other executors call Record, one event at a time.
//
// Cost of Record: one uncontended mutex acquisition and one append per event
// (one allocation of a 1024-event chunk every 1024 events of a worker). Events are kept in shards chosen by the
// event's worker, so that workers recording at once rarely share a lock:
// each worker's events are mostly recorded by that worker's goroutine. A
// single lock was simpler but made every worker wait for every other; a
// per-goroutine buffer would need goroutine identity, which Go does not
// give. The zero Log is empty and ready to use; it must not be copied
// after first use.
type Log struct {
	shards [logShards]logShard
}

// logChunk is the number of events in one chunk of a shard. Events are
// kept in fixed chunks rather than one growing slice: growing would copy
// every event recorded so far, again and again, while the executor waits.
const logChunk = 1024

type logShard struct {
	mu     sync.Mutex
	chunks [][]Event  // every chunk but the last is full
	packed [][]Packed // chunks before fill are full, those after it empty
	fill   int
	n      int
	_      [24]byte // keep neighbouring shards' locks off one cache line
}

func (s *logShard) add(e Event) {
	if len(s.chunks) == 0 || len(s.chunks[len(s.chunks)-1]) == logChunk {
		s.chunks = append(s.chunks, make([]Event, 0, logChunk))
	}
	last := &s.chunks[len(s.chunks)-1]
	*last = append(*last, e)
	s.n++
}

// Record appends e. Safe for concurrent use.
func (l *Log) Record(e Event) {
	s := &l.shards[uint32(e.Worker+1)%logShards]
	s.mu.Lock()
	s.add(e)
	s.mu.Unlock()
}

// RecordPacked appends the events of batch, which it copies: the caller may
// reuse batch when it returns. Safe for concurrent use.
func (l *Log) RecordPacked(batch []Packed) {
	if len(batch) == 0 {
		return
	}
	s := &l.shards[uint32(batch[0].Worker()+1)%logShards]
	s.mu.Lock()
	for len(batch) > 0 {
		// Chunks fill in order; after a Reset, the kept ones fill again.
		for s.fill < len(s.packed) && len(s.packed[s.fill]) == cap(s.packed[s.fill]) {
			s.fill++
		}
		if s.fill == len(s.packed) {
			s.packed = append(s.packed, make([]Packed, 0, 4*logChunk))
		}
		c := &s.packed[s.fill]
		k := min(len(batch), cap(*c)-len(*c))
		*c = append(*c, batch[:k]...)
		s.n += k
		batch = batch[k:]
	}
	s.mu.Unlock()
}

// Len returns the number of events recorded so far.
func (l *Log) Len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += s.n
		s.mu.Unlock()
	}
	return n
}

// Events returns a copy of the events recorded so far, sorted by Seq. Events
// with equal Seq (which a correct recorder never produces) keep the order
// of their shards and, within one worker, the order they were recorded in.
func (l *Log) Events() []Event {
	out := make([]Event, 0, l.Len())
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for _, c := range s.chunks {
			out = append(out, c...)
		}
		for _, c := range s.packed {
			for _, p := range c {
				out = append(out, p.Event())
			}
		}
		s.mu.Unlock()
	}
	SortBySeq(out)
	return out
}

// Reset forgets every event. It keeps the memory of packed events for the
// events to come, as bytes.Buffer.Reset does: a Log reused run after run
// (say, once per test case) allocates only while it grows.
func (l *Log) Reset() {
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for j := range s.packed {
			s.packed[j] = s.packed[j][:0]
		}
		s.chunks, s.n, s.fill = nil, 0, 0
		s.mu.Unlock()
	}
}

// SortBySeq sorts events by Seq, keeping the order of equal ones.
func SortBySeq(events []Event) {
	if slices.IsSortedFunc(events, cmpSeq) {
		return
	}
	slices.SortStableFunc(events, cmpSeq)
}

func cmpSeq(a, b Event) int { return cmp.Compare(a.Seq, b.Seq) }
