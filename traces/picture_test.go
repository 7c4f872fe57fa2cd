package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/internal/chromium"
)

// lostWake is a trace with a violation to show: task 1 is woken while
// waiting, but then never taken again.
var lostWakeMark = &Mark{Index: 6, Rule: "WAKE", Message: "event 6: lost wakeup: task 1 was woken <scheduled> but never polled again & is not done"}

func TestWriteHTMLStatic(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, hdr2, sample, lostWakeMark); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{`src="http`, `href="http`, "@import", "<link"} {
		if strings.Contains(page, bad) {
			t.Errorf("page is not self-contained: it contains %q", bad)
		}
	}
	// The message is only in the JSON data, with < > & escaped, so that it
	// cannot end the script element.
	if strings.Contains(page, "<scheduled>") {
		t.Error("the message's < > reached the page unescaped")
	}
	if !strings.Contains(page, `id="violation"`) {
		t.Error("no violation element")
	}
}

func TestHTMLInChromium(t *testing.T) {
	file := filepath.Join(t.TempDir(), "timeline.html")
	var buf bytes.Buffer
	if err := WriteHTML(&buf, hdr2, sample, lostWakeMark); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(chromium.Run(t, file, "--dump-dom"))
	// Only the script puts the message into a span.msg inside #violation:
	// finding it there shows the page was drawn, not just written.
	msg := regexp.QuoteMeta(html.EscapeString(lostWakeMark.Message))
	if !regexp.MustCompile(`<div id="violation"[^>]*>.*<span class="msg">` + msg + `</span>`).MatchString(dom) {
		t.Errorf("the rendered page does not show the violation %q in #violation:\n%s", lostWakeMark.Message, dom)
	}
	for _, want := range []string{
		`<tr id="ev-6" class="bad`,                     // the offending event is highlighted in the table
		`id="violation-mark"`,                          // and in the timeline
		`class="poll"`,                                 // polls are drawn as blocks
		`data-result="pending"`, `data-result="panic"`, // coloured by outcome
		`class="steal"`,                               // the steal of t2 is an arrow
		`class="wake scheduled"`,                      // the wake of t1 is an arrow to its row
		`data-state="WAITING"`, `data-state="QUEUED"`, // t1's states on its row
		`data-queue="0"`,                    // w0's deque holds t2 for a while
		`worker 1</text>`, `outside</text>`, // lanes
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %s", want)
		}
	}
	if n := strings.Count(dom, `<rect x=`); n < 3 {
		t.Errorf("%d rects drawn; want the poll blocks", n)
	}
}

func TestHTMLWindowOfLongTrace(t *testing.T) {
	var events []Event
	for i := range 3 * MaxHTMLEvents {
		events = append(events, streamEvent(i))
	}
	var buf bytes.Buffer
	mark := &Mark{Index: 2*MaxHTMLEvents + 7, Message: "here"}
	if err := WriteHTML(&buf, Header{Format: Format, Version: 1, Workers: 4}, events, mark); err != nil {
		t.Fatal(err)
	}
	d := pageData(t, buf.String())
	if len(d.Events) != MaxHTMLEvents || d.Total != len(events) {
		t.Fatalf("window of %d of %d events, want %d of %d", len(d.Events), d.Total, MaxHTMLEvents, len(events))
	}
	last := d.Events[len(d.Events)-1].I
	if d.Events[0].I > mark.Index || last < mark.Index {
		t.Errorf("window %d..%d does not hold the marked event %d", d.Events[0].I, last, mark.Index)
	}
}

func TestChromeTrace(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteChromeTrace(&buf, hdr2, sample); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Ph   string         `json:"ph"`
			Tid  int            `json:"tid"`
			Ts   uint64         `json:"ts"`
			Dur  uint64         `json:"dur"`
			ID   uint64         `json:"id"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	var polls, threads int
	flows := map[uint64]string{}
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "X":
			polls++
			if e.Name == "t1" && (e.Tid != 1 || e.Ts != 2 || e.Dur != 4) {
				t.Errorf("poll of t1: tid %d ts %d dur %d, want tid 1 (worker 0) from seq 2 to 6", e.Tid, e.Ts, e.Dur)
			}
			if e.Name == "t2" && (e.Tid != 2 || e.Args["source"] != "steal") {
				t.Errorf("poll of t2: tid %d args %v, want worker 1, a steal", e.Tid, e.Args)
			}
		case "M":
			threads++
		case "s", "f":
			flows[e.ID] += e.Ph
		}
	}
	if polls != 2 {
		t.Errorf("%d complete events, want one per poll-end (2)", polls)
	}
	if threads != 1+1+hdr2.Workers {
		t.Errorf("%d metadata events, want the process and %d threads", threads, 1+hdr2.Workers)
	}
	// The steal is a flow s→f; the wake of t1 is never followed by a take,
	// so its flow has a start only.
	var pairs, open int
	for _, f := range flows {
		switch f {
		case "sf":
			pairs++
		case "s":
			open++
		default:
			t.Errorf("flow %q", f)
		}
	}
	if pairs != 1 || open != 1 {
		t.Errorf("%d flow pairs and %d open flows, want 1 and 1", pairs, open)
	}
}

// The state the timeline rebuilds from the sample's events: where each
// task is after each event.
func TestTimelineState(t *testing.T) {
	s := newTLState(hdr2)
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
	for i, e := range sample {
		s.apply(&e)
		got := fmt.Sprintf("g%v l0%v l1%v cur%v", s.global.tasks(), s.locals[0].tasks(), s.locals[1].tasks(), s.cur)
		for _, id := range []int64{1, 2} {
			if st := s.state(id); st != "" {
				got += fmt.Sprintf(" t%d:%s", id, st)
			}
		}
		if got != want[i] {
			t.Errorf("after event %d (%s): %s, want %s", i+1, FormatEvent(e), got, want[i])
		}
	}
}

// A dropped wake of a RUNNING task leaves it RUNNING; the page marks it.
func TestTimelineDroppedWake(t *testing.T) {
	s := newTLState(hdr2)
	for _, e := range []Event{
		{Seq: 1, Kind: KindSpawn, Task: 1, Worker: -1, Queue: QueueGlobal},
		{Seq: 2, Kind: KindTake, Task: 1, Worker: 0, Source: SourceGlobal},
		{Seq: 3, Kind: KindWake, Task: 1, Worker: -1, Outcome: OutcomeDropped},
		{Seq: 4, Kind: KindPollEnd, Task: 1, Worker: 0, Result: ResultPending},
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
	h := Header{Format: Format, Version: 1, Workers: 1, Policy: "fifo"}
	tl := NewTimeline(h)
	const n = 3 * MaxHTMLEvents
	// Task k is spawned at event 2k and taken at 2k+1, except task 1,
	// which stays queued for ever.
	for k := 1; k <= n/2; k++ {
		tl.Add(Event{Seq: uint64(2 * k), Kind: KindSpawn, Task: int64(k), Worker: -1, Queue: QueueGlobal})
		if k != 1 {
			tl.Add(Event{Seq: uint64(2*k + 1), Kind: KindTake, Task: int64(k), Worker: 0, Source: SourceGlobal})
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

// pageData reads the data a timeline page embeds (its trace-data script);
// t is a test or a rapid check.
func pageData(t interface {
	Helper()
	Fatal(...any)
}, page string) htmlData {
	t.Helper()
	i := strings.Index(page, `id="trace-data">`)
	j := strings.Index(page[i:], "</script>")
	var d htmlData
	if err := json.Unmarshal([]byte(page[i+len(`id="trace-data">`):i+j]), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// Any events, well-formed or not, make a page: the timeline never panics
// and never keeps more than MaxHTMLEvents of them.
func TestTimelineAnyEvents(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHeader().Draw(t, "header")
		events := rapid.SliceOfN(genEvent(h), 0, 60).Draw(t, "events")
		for i := range events {
			// Out of range on purpose, sometimes.
			if rapid.IntRange(0, 9).Draw(t, "odd") == 0 {
				events[i].Worker = int32(rapid.IntRange(-3, h.Workers+3).Draw(t, "worker"))
				events[i].Queue = Queue(rapid.IntRange(-3, h.Workers+3).Draw(t, "queue"))
			}
		}
		var buf bytes.Buffer
		mark := &Mark{Index: rapid.IntRange(-1, len(events)+2).Draw(t, "mark"), Message: "m", Symptom: &Symptom{Index: -1, Message: "s"}}
		if err := WriteHTML(&buf, h, events, mark); err != nil {
			t.Fatal(err)
		}
		d := pageData(t, buf.String())
		if len(d.Events) != len(events) {
			t.Fatalf("%d events drawn of %d", len(d.Events), len(events))
		}
	})
}
