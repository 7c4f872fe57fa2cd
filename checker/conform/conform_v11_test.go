package conform

import (
	"fmt"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

// checkV11Testdata checks a v1.1 trace under testdata/conform
// (v11_*.txt; TestConformanceTestdata checks its want, reason and report
// lines): it numbers its events from seq 1, so that a violation's seq
// names its index too.
func checkV11Testdata(t *testing.T, h traces.Header, events []traces.Event, r *Report) {
	t.Helper()
	if h.Minor != 1 {
		t.Fatalf("not a v1.1 trace")
	}
	for i, e := range events {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d: number the events from seq 1", i, e.Seq)
		}
	}
	if r.Verdict == checker.Violated && r.Err.Index != int(r.Err.Event.Seq)-1 {
		t.Fatalf("violation at index %d, seq %d", r.Err.Index, r.Err.Event.Seq)
	}
}

// reportFigure states the figure a report item names, in its words; for
// "firstpanic tN WORD" the item itself if the first panic listed is task
// N's and its message holds WORD.
func reportFigure(r *Report, item string) string {
	name, _, _ := strings.Cut(item, " ")
	switch name {
	case "stopped":
		if !r.Stopped {
			return "not stopped"
		}
		return fmt.Sprintf("stopped at %d", r.StopIndex+1)
	case "abandoned":
		return "abandoned " + abandonedList(r.Abandoned)
	case "lost":
		return "lost " + abandonedList(r.Lost)
	case "wakesafter":
		return fmt.Sprintf("wakesafter %d", r.WakesAfterStop)
	case "errors":
		return fmt.Sprintf("errors %d", r.ErrorCount)
	case "panics":
		return fmt.Sprintf("panics %d", r.PanicCount)
	case "spurious":
		return fmt.Sprintf("spurious %d", r.SpuriousPolls)
	case "notaskwakes":
		return fmt.Sprintf("notaskwakes %d", r.NoTaskWakes)
	case "maxotherpolls":
		return fmt.Sprintf("maxotherpolls %d (t%d)", r.MaxOtherPolls, r.MaxOtherPollsTask)
	case "maxdelay":
		return fmt.Sprintf("maxdelay %d (t%d)", r.MaxDelay, r.MaxDelayTask)
	case "firstpanic":
		var task int64
		var word string
		fmt.Sscanf(item, "firstpanic t%d %s", &task, &word)
		if len(r.Panics) == 0 || r.Panics[0].Task != task || !strings.Contains(r.Panics[0].Msg, word) {
			return fmt.Sprintf("firstpanic of %v", r.Panics)
		}
		return item
	case "relaxed":
		return fmt.Sprintf("relaxed %d", r.Relaxed)
	}
	return "unknown figure " + name
}

func TestConformanceV11Config(t *testing.T) {
	v11 := func(policy string, cfg map[string]int) traces.Header {
		h := hdr(2, policy, cfg)
		h.Minor = 1
		return h
	}
	for _, tc := range []struct {
		h    traces.Header
		want string
	}{
		{v11("fifo", map[string]int{"spurious-polls": 2}), "spurious-polls = 2: want 0 or 1"},
		{v11("fifo", map[string]int{"slice-us": 5}), "slice-us is a parameter of policy timeslice, and means nothing under policy fifo"},
		{v11("fifo", map[string]int{"aging": 2}), "aging is a parameter of policy priority"},
		{v11("worksteal", map[string]int{"retries": 2}), "retries is a parameter of policy retry"},
		{v11("timeslice", map[string]int{"slice-us": 5, "slice": 2}), "a slice is a count or a time, not both"},
		{v11("timeslice", map[string]int{"slice-us": 0}), "slice-us = 0: want a number ≥ 1"},
		{v11("priority", map[string]int{"aging": 256}), "aging = 256: want 0 to 255"},
		{hdr(2, "fifo", map[string]int{"spurious-polls": 1}), `is trace format v1.1: add "minor":1 to the header`},
	} {
		if _, err := New(tc.h); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.h.Config, err, tc.want)
		}
	}
	for _, h := range []traces.Header{
		v11("fifo", map[string]int{"spurious-polls": 1}),
		v11("timeslice", map[string]int{"slice-us": 1, "spurious-polls": 0}),
		v11("priority", map[string]int{"aging": 255}),
	} {
		if _, err := New(h); err != nil {
			t.Errorf("%v: %v", h.Config, err)
		}
	}
}

// A v1.0 priority trace keeps its behaviour (takes from anywhere) and says
// that the order was not checked; the report's summary shows the v1.1
// figures.
func TestConformanceV11Report(t *testing.T) {
	h, events := parseTrace(t, `execspec-trace v1 executor=prio workers=1 policy=priority
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 w0 take t2 global
#4 w0 poll-begin t2
#5 w0 poll-end t2 ready
#6 w0 take t1 global
#7 w0 poll-begin t1
#8 w0 poll-end t1 ready
`)
	r := checkEvents(t, h, events)
	if r.Verdict != checker.Holds || !r.PriorityUnchecked || !strings.Contains(r.Summary(), "priority order not checked") {
		t.Fatalf("v1.0 priority trace: %s, unchecked %v\n%s", r.Verdict, r.PriorityUnchecked, r.Summary())
	}
	h, events = parseTrace(t, `execspec-trace v1.1 executor=busy workers=2 policy=fifo spurious-polls=1
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 out spawn t3 -> global
#4 w0 take t1 global
#5 w0 poll-begin t1
#6 w0 poll-end t1 pending
#7 w0 requeue t1 -> global
#8 out wake
#9 w1 take t2 global
#10 w1 poll-begin t2
#11 w1 poll-end t2 error
#12 out stop
`)
	r = checkEvents(t, h, events)
	s := r.Summary()
	wantAll(t, "summary", s,
		"conforms: 12 events, 3 tasks, 1 DONE, the rest abandoned at the executor's stop",
		"the executor stopped at event 12; 2 tasks abandoned at stop: QUEUED t1 t3",
		"1 spurious polls",
		"1 wakes through wakers that name no task",
		"error: event 11 (seq 11): task 2 failed (returned an error) on worker 1",
	)
	if r.Verdict != checker.Holds || len(r.LostWakeups)+len(r.NeverCompleted) != 0 || len(r.Abandoned) != 2 || r.PanicCount != 0 || r.ErrorCount != 1 {
		t.Errorf("report %+v", r)
	}
}

// FuzzConformanceV11: random v1.1 event sequences (fuzzTrace's, with v1.1
// headers and fields: stops, no-task wakes, error results, futures,
// times, priorities, spurious polls, time slices) never panic, a violation
// is sticky, and the verdict matches the report.
func FuzzConformanceV11(f *testing.F) {
	f.Add([]byte{0x0a, 0x00, 0x01, 0x04, 0x00}, uint64(0x1234))
	f.Add([]byte{0x04, 0x13, 0x01, 0x01, 0x00, 0x12, 0x05, 0x00, 0x13, 0x05, 0x00, 0x24, 0x05, 0x00}, uint64(99))
	f.Add([]byte{0x0d, 0x02, 0x01, 0x02, 0x01, 0x02, 0x05, 0x01, 0x13, 0x05, 0x01, 0x03, 0x05, 0x01, 0x14, 0x05, 0x01, 0x35, 0x05, 0x01}, uint64(7))
	f.Fuzz(func(t *testing.T, data []byte, bits uint64) {
		h, events := fuzzTrace(data)
		h.Minor = 1
		if h.Config == nil {
			h.Config = map[string]int{}
		}
		h.Config["spurious-polls"] = int(bits & 1)
		switch h.Policy {
		case "priority":
			h.Config["aging"] = int(bits>>1) % 4
		case "timeslice":
			if bits&2 != 0 {
				delete(h.Config, "slice")
				h.Config["slice-us"] = 1 + int(bits>>2)%5
			}
		}
		c, err := New(h)
		if err != nil {
			t.Fatalf("header %+v refused: %v", h, err)
		}
		r := bits
		var now int64
		for i := range events {
			e := &events[i]
			r = r*6364136223846793005 + 1442695040888963407
			x := r >> 33
			switch x % 16 {
			case 0:
				e.Kind, e.Task, e.Source, e.Result, e.Outcome, e.Queue = traces.KindStop, 0, 0, 0, 0, 0
			case 1:
				e.Kind, e.Task, e.Outcome, e.Queue = traces.KindWake, 0, 0, 0
			case 2:
				if e.Kind == traces.KindPollEnd {
					e.Result = traces.ResultError
				}
			}
			switch e.Kind {
			case traces.KindPollBegin, traces.KindPollEnd, traces.KindRegister:
				e.Future = int64(x>>4) % 3
			case traces.KindSpawn, traces.KindWake, traces.KindRequeue:
				if x&(1<<6) != 0 || (e.Kind == traces.KindSpawn && x&(1<<7) != 0) {
					e.Priority, e.Prioritized = int32(x>>8)%5-2, true
				}
			}
			if x&(1<<9) != 0 {
				now += int64(x>>10) % 4000
				e.Time = now
			}
		}
		_ = checkSticky(t, c, events).Summary()
	})
}
