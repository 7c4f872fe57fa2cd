package traces

import (
	"slices"
	"sync"
)

// Log is a Recorder that keeps every event in memory. Record is safe to call
// from any number of goroutines at once; Events returns them ordered by Seq.
//
// Cost: one mutex acquisition and one append per event (amortized no
// allocation). A sharded buffer would scale better with many cores, but the
// events of one run share a Seq clock already, so the executor's own atomic
// increment dominates; the simple lock is kept. The zero Log is empty and
// ready to use.
type Log struct {
	mu     sync.Mutex
	events []Event
}

// Record appends e. Safe for concurrent use.
func (l *Log) Record(e Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// Len returns the number of events recorded so far.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// Events returns a copy of the events recorded so far, sorted by Seq
// (stable, so events with equal Seq keep the order they were recorded in).
func (l *Log) Events() []Event {
	l.mu.Lock()
	out := slices.Clone(l.events)
	l.mu.Unlock()
	SortBySeq(out)
	return out
}

// Reset forgets every event, keeping the memory for reuse.
func (l *Log) Reset() {
	l.mu.Lock()
	clear(l.events)
	l.events = l.events[:0]
	l.mu.Unlock()
}

// SortBySeq sorts events by Seq, keeping the order of equal ones.
func SortBySeq(events []Event) {
	if slices.IsSortedFunc(events, cmpSeq) {
		return
	}
	slices.SortStableFunc(events, cmpSeq)
}

func cmpSeq(a, b Event) int {
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}
