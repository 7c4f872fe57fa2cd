package picture

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/internal/chromium"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// sample reads testdata/lost_wake.txt, a short run of a two-worker
// executor with a violation to show: task 1 is woken while waiting, but
// then never taken again.
func sample(t testing.TB) (traces.Header, []traces.Event) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "lost_wake.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, events, err := traces.ParseText(f)
	if err != nil {
		t.Fatal(err)
	}
	return h, events
}

// lostWakeMark marks the lost wakeup of the sample.
var lostWakeMark = &Mark{Index: 6, Rule: "WAKE", Message: "event 6: lost wakeup: task 1 was woken <scheduled> but never polled again & is not done"}

func TestWriteHTMLStatic(t *testing.T) {
	var buf bytes.Buffer
	h, events := sample(t)
	if err := WriteHTML(&buf, h, events, lostWakeMark); err != nil {
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
	h, events := sample(t)
	if err := WriteHTML(&buf, h, events, lostWakeMark); err != nil {
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
	// Task k is spawned, taken by worker k%4 and polled to Ready.
	var events []traces.Event
	for i := range 3 * MaxHTMLEvents {
		e := traces.Event{Seq: uint64(i + 1), Task: int64(i/3 + 1), Worker: int32(i / 3 % 4), Victim: -1}
		switch i % 3 {
		case 0:
			e.Kind, e.Queue, e.Worker = traces.KindSpawn, traces.QueueGlobal, -1
		case 1:
			e.Kind, e.Source = traces.KindTake, traces.SourceGlobal
		case 2:
			e.Kind, e.Result = traces.KindPollEnd, traces.ResultReady
		}
		events = append(events, e)
	}
	var buf bytes.Buffer
	mark := &Mark{Index: 2*MaxHTMLEvents + 7, Message: "here"}
	if err := WriteHTML(&buf, traces.Header{Format: traces.Format, Version: 1, Workers: 4}, events, mark); err != nil {
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
	h, events := sample(t)
	if err := WriteChromeTrace(&buf, h, events); err != nil {
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
	if threads != 1+1+h.Workers {
		t.Errorf("%d metadata events, want the process and %d threads", threads, 1+h.Workers)
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

// WriteChromeTrace checks the header first: a hostile worker count is an
// error, not a table of sixteen million threads.
func TestChromeHeaderChecked(t *testing.T) {
	var b strings.Builder
	err := WriteChromeTrace(&b, traces.Header{Format: traces.Format, Version: traces.Version, Workers: 1 << 24}, nil)
	if err == nil || b.Len() > 0 {
		t.Fatalf("err %v, %d bytes written", err, b.Len())
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

// anyEvent draws an event of any kind with any fields, well-formed or not:
// kinds, sources, results and outcomes out of range included, workers and
// queues outside the header's.
func anyEvent(workers int) *rapid.Generator[traces.Event] {
	return rapid.Custom(func(t *rapid.T) traces.Event {
		return traces.Event{
			Seq:     rapid.Uint64().Draw(t, "seq"),
			Kind:    traces.Kind(rapid.IntRange(0, int(traces.KindStop)+1).Draw(t, "kind")),
			Task:    rapid.Int64Range(-1, 6).Draw(t, "task"),
			Worker:  int32(rapid.IntRange(-3, workers+3).Draw(t, "worker")),
			Victim:  int32(rapid.IntRange(-3, workers+3).Draw(t, "victim")),
			Queue:   traces.Queue(rapid.IntRange(-3, workers+3).Draw(t, "queue")),
			Source:  traces.Source(rapid.IntRange(0, int(traces.SourceLIFO)+1).Draw(t, "source")),
			Result:  traces.Result(rapid.IntRange(0, int(traces.ResultError)+1).Draw(t, "result")),
			Outcome: traces.Outcome(rapid.IntRange(0, int(traces.OutcomeDropped)+1).Draw(t, "outcome")),
			Rule:    rapid.SampledFrom(append([]model.Rule{0}, model.Rules...)).Draw(t, "rule"),
			Detail:  rapid.StringN(0, 8, -1).Draw(t, "detail"),
		}
	})
}

// Any events, well-formed or not, make a page: the timeline never panics
// and never keeps more than MaxHTMLEvents of them.
func TestTimelineAnyEvents(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := traces.Header{Format: traces.Format, Version: traces.Version,
			Workers: rapid.IntRange(1, 5).Draw(t, "workers"),
			Policy:  rapid.SampledFrom([]string{"", "fifo", "worksteal", "priority"}).Draw(t, "policy"),
		}
		if rapid.Bool().Draw(t, "no local queues") {
			h.Config = map[string]int{"local-cap": 0}
		}
		events := rapid.SliceOfN(anyEvent(h.Workers), 0, 60).Draw(t, "events")
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
