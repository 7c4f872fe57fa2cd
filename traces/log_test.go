package traces

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestLogConcurrent(t *testing.T) {
	var (
		l     Log
		clock atomic.Uint64
		wg    sync.WaitGroup
	)
	const goroutines, each = 8, 500
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				// Half the events from this goroutine's worker, half from
				// others, so that shards are shared as in a real run.
				w := int32(g)
				if clock.Load()%2 == 0 {
					w = int32((g + 1) % goroutines)
				}
				l.Record(Event{Seq: clock.Add(1), Kind: KindPark, Worker: w, Victim: -1})
			}
		}()
	}
	wg.Wait()
	events := l.Events()
	if len(events) != goroutines*each || l.Len() != goroutines*each {
		t.Fatalf("%d events, want %d", len(events), goroutines*each)
	}
	for i, e := range events {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d: not sorted, or an event lost", i, e.Seq)
		}
	}
	l.Reset()
	if l.Len() != 0 || len(l.Events()) != 0 {
		t.Error("Reset left events")
	}
}

// TestLogKeepsEqualSeqInRecordOrder: within one worker, events with the
// same Seq keep the order they were recorded in.
func TestLogKeepsEqualSeqInRecordOrder(t *testing.T) {
	var l Log
	for i := range 5 {
		l.Record(Event{Seq: 7, Kind: KindPark, Worker: 3, Task: int64(i)})
	}
	l.Record(Event{Seq: 1, Kind: KindPark, Worker: 20})
	ev := l.Events()
	if ev[0].Worker != 20 {
		t.Fatalf("first event %+v, want seq 1", ev[0])
	}
	for i, e := range ev[1:] {
		if e.Task != int64(i) {
			t.Fatalf("equal-seq events reordered: %+v", ev)
		}
	}
}

func TestSortBySeqStable(t *testing.T) {
	ev := []Event{{Seq: 2, Task: 1}, {Seq: 1, Task: 2}, {Seq: 2, Task: 3}, {Seq: 1, Task: 4}}
	SortBySeq(ev)
	want := []int64{2, 4, 1, 3}
	for i, e := range ev {
		if e.Task != want[i] {
			t.Fatalf("order %v, want tasks %v", ev, want)
		}
	}
}
