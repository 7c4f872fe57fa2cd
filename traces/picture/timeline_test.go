package picture

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/execspec/execspec/traces"
)

// The state the timeline rebuilds from the sample's events: where each
// task is after each event.
func TestTimelineState(t *testing.T) {
	h, events := sample(t)
	s := newTLState(h)
	want := []string{
		"g[1] l0[] l1[] cur[0 0] t1:QUEUED",
		"g[] l0[] l1[] cur[1 0] t1:RUNNING",
		"g[] l0[] l1[] cur[1 0] t1:RUNNING",
		"g[] l0[2] l1[] cur[1 0] t1:RUNNING t2:QUEUED",
		"g[] l0[2] l1[] cur[0 0] t1:WAITING t2:QUEUED",
		"g[] l0[] l1[] cur[0 2] t1:WAITING t2:RUNNING",
		"g[] l0[] l1[1] cur[0 2] t1:QUEUED t2:RUNNING",
		"g[] l0[] l1[1] cur[0 2] t1:QUEUED t2:RUNNING",
		"g[] l0[] l1[1] cur[0 2] t1:QUEUED t2:RUNNING",
		"g[] l0[] l1[1] cur[0 0] t1:QUEUED t2:DONE",
		"g[] l0[] l1[1] cur[0 0] t1:QUEUED t2:DONE",
	}
	for i, e := range events {
		s.apply(&e)
		got := fmt.Sprintf("g%v l0%v l1%v cur%v", s.global.tasks(), s.locals[0].tasks(), s.locals[1].tasks(), s.cur)
		for _, id := range []int64{1, 2} {
			if st := s.state(id); st != "" {
				got += fmt.Sprintf(" t%d:%s", id, st)
			}
		}
		if got != want[i] {
			t.Errorf("after event %d (%s): %s, want %s", i+1, traces.FormatEvent(e), got, want[i])
		}
	}
}

// A dropped wake of a RUNNING task leaves it RUNNING; the page marks it.
func TestTimelineDroppedWake(t *testing.T) {
	h, _ := sample(t)
	s := newTLState(h)
	for _, e := range []traces.Event{
		{Seq: 1, Kind: traces.KindSpawn, Task: 1, Worker: -1, Queue: traces.QueueGlobal},
		{Seq: 2, Kind: traces.KindTake, Task: 1, Worker: 0, Source: traces.SourceGlobal},
		{Seq: 3, Kind: traces.KindWake, Task: 1, Worker: -1, Outcome: traces.OutcomeDropped},
		{Seq: 4, Kind: traces.KindPollEnd, Task: 1, Worker: 0, Result: traces.ResultPending},
	} {
		s.apply(&e)
		if e.Seq == 3 && (s.state(1) != "RUNNING" || s.global.n != 0) {
			t.Fatalf("a dropped wake changed the state: t1 %s, global %v", s.state(1), s.global.tasks())
		}
	}
	if s.state(1) != "WAITING" {
		t.Errorf("t1 is %s after its poll returned Pending with the wake dropped, want WAITING", s.state(1))
	}
}

// A long trace is drawn as a window, in bounded memory, starting from the
// state the events before it left, and the page says what it left out.
func TestTimelineWindowStartsFromState(t *testing.T) {
	h := traces.Header{Format: traces.Format, Version: 1, Workers: 1, Policy: "fifo"}
	tl := NewTimeline(h)
	const n = 3 * MaxHTMLEvents
	// Task k is spawned at event 2k and taken at 2k+1, except task 1,
	// which stays queued for ever.
	for k := 1; k <= n/2; k++ {
		tl.Add(traces.Event{Seq: uint64(2 * k), Kind: traces.KindSpawn, Task: int64(k), Worker: -1, Queue: traces.QueueGlobal})
		if k != 1 {
			tl.Add(traces.Event{Seq: uint64(2*k + 1), Kind: traces.KindTake, Task: int64(k), Worker: 0, Source: traces.SourceGlobal})
		}
	}
	if len(tl.ring) != MaxHTMLEvents {
		t.Fatalf("the timeline keeps %d events, want at most %d", len(tl.ring), MaxHTMLEvents)
	}
	var buf bytes.Buffer
	if err := tl.WriteHTML(&buf, nil); err != nil {
		t.Fatal(err)
	}
	d := pageData(t, buf.String())
	if d.Start.Global.N != 1 || d.Start.Global.H[0] != 1 {
		t.Errorf("the window starts with global %+v, want [t1] (spawned before the window, never taken)", d.Start.Global)
	}
	if d.Before["spawn"] == 0 || d.Before["take"] == 0 || d.Offset+len(d.Events) != d.Total {
		t.Errorf("the page does not say what it left out: before %v, offset %d, %d events of %d", d.Before, d.Offset, len(d.Events), d.Total)
	}
}
