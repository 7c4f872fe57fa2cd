package traces

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// A trace of format v1.1, in both forms, with every field and value v1.1
// added.
const sampleV11JSON = `{"format":"execspec-trace","version":1,"executor":"prio","workers":2,"policy":"priority","config":{"aging":2,"spurious-polls":1},"minor":1,"order":"intervals","unobserved":["park","source"]}
{"seq":1,"kind":"spawn","task":1,"queue":"global","priority":5,"time":100}
{"seq":2,"kind":"spawn","task":2,"queue":"global","priority":-3}
{"seq":3,"kind":"take","task":1,"worker":0,"source":"global","call":2,"ret":3}
{"seq":4,"kind":"poll-begin","task":1,"worker":0,"future":1,"time":1200}
{"seq":5,"kind":"register","task":1,"worker":0,"future":1}
{"seq":6,"kind":"wake"}
{"seq":7,"kind":"poll-end","task":1,"worker":0,"result":"error","future":1,"time":5400}
{"seq":8,"kind":"requeue","task":1,"queue":"global","priority":7}
{"seq":9,"kind":"wake","task":2,"worker":1,"outcome":"coalesced","priority":0}
{"seq":10,"kind":"stop","worker":1,"detail":"worker 1 unwound"}
{"seq":11,"kind":"stop","time":9000}
`

const sampleV11Text = `execspec-trace v1.1 executor=prio workers=2 policy=priority order=intervals unobserved=park,source aging=2 spurious-polls=1
#1 out spawn t1 -> global prio=5 @100ns
#2 out spawn t2 -> global prio=-3
#3 w0 take t1 global call=2 ret=3
#4 w0 poll-begin t1 f1 @1200ns
#5 w0 register t1 f1
#6 out wake
#7 w0 poll-end t1 error f1 @5400ns
#8 out requeue t1 -> global prio=7
#9 w1 wake t2 coalesced prio=0
#10 w1 stop detail="worker 1 unwound"
#11 out stop @9000ns
`

func TestV11RoundTrip(t *testing.T) {
	h, events, err := ReadAll(strings.NewReader(sampleV11JSON), "v11.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if h.Minor != 1 || h.Order != OrderIntervals || strings.Join(h.Unobserved, ",") != "park,source" || h.Config["spurious-polls"] != 1 {
		t.Fatalf("header %+v", h)
	}
	want := map[int]Event{
		0:  {Seq: 1, Kind: KindSpawn, Task: 1, Worker: -1, Victim: -1, Queue: QueueGlobal, Priority: 5, Prioritized: true, Time: 100},
		3:  {Seq: 4, Kind: KindPollBegin, Task: 1, Worker: 0, Victim: -1, Future: 1, Time: 1200},
		5:  {Seq: 6, Kind: KindWake, Worker: -1, Victim: -1},
		6:  {Seq: 7, Kind: KindPollEnd, Task: 1, Worker: 0, Victim: -1, Result: ResultError, Future: 1, Time: 5400},
		8:  {Seq: 9, Kind: KindWake, Task: 2, Worker: 1, Victim: -1, Outcome: OutcomeCoalesced, Prioritized: true},
		10: {Seq: 11, Kind: KindStop, Worker: -1, Victim: -1, Time: 9000},
	}
	for i, w := range want {
		if events[i] != w {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, events[i], w)
		}
	}
	var buf bytes.Buffer
	if err := WriteAll(&buf, h, events); err != nil {
		t.Fatal(err)
	}
	if buf.String() != sampleV11JSON {
		t.Errorf("JSON written back:\n%s\nwant\n%s", buf.String(), sampleV11JSON)
	}
	buf.Reset()
	if err := WriteText(&buf, h, events); err != nil {
		t.Fatal(err)
	}
	if buf.String() != sampleV11Text {
		t.Errorf("text form:\n%s\nwant\n%s", buf.String(), sampleV11Text)
	}
	h2, again, err := ParseText(strings.NewReader(sampleV11Text))
	if err != nil {
		t.Fatal(err)
	}
	if h2.Minor != 1 || h2.Order != h.Order || strings.Join(h2.Unobserved, ",") != "park,source" {
		t.Fatalf("text header %+v", h2)
	}
	assertEvents(t, again, events)
}

// Every v1.1 field or value in a v1.0 trace is rejected at its line, with
// the message that says how to opt in.
func TestV11NeedsMinor(t *testing.T) {
	const v10 = `{"format":"execspec-trace","version":1,"workers":2}`
	for _, line := range []string{
		`{"seq":1,"kind":"stop"}`,
		`{"seq":1,"kind":"poll-end","task":1,"worker":0,"result":"error"}`,
		`{"seq":1,"kind":"wake"}`,
		`{"seq":1,"kind":"spawn","task":1,"queue":"global","priority":1}`,
		`{"seq":1,"kind":"poll-begin","task":1,"worker":0,"future":1}`,
		`{"seq":1,"kind":"park","worker":0,"time":5}`,
	} {
		_, _, err := ReadAll(strings.NewReader(v10+"\n\n"+line+"\n"), "t.jsonl")
		if err == nil || !strings.HasPrefix(err.Error(), "t.jsonl:3: ") || !strings.HasSuffix(err.Error(), `is trace format v1.1: add "minor":1 to the header`) || !errors.Is(err, ErrVersion) {
			t.Errorf("%s in a v1.0 trace: %v", line, err)
		}
		// The same line under "minor":1 is read.
		if _, _, err := ReadAll(strings.NewReader(`{"format":"execspec-trace","version":1,"workers":2,"minor":1,"policy":"priority"}`+"\n"+line+"\n"), "t.jsonl"); err != nil {
			t.Errorf("%s in a v1.1 trace: %v", line, err)
		}
	}
	for _, hdr := range []string{
		`{"format":"execspec-trace","version":1,"workers":2,"order":"seq"}`,
		`{"format":"execspec-trace","version":1,"workers":2,"unobserved":["take"]}`,
		`{"format":"execspec-trace","version":1,"workers":2,"minor":0,"config":{"spurious-polls":1}}`,
		`{"format":"execspec-trace","version":1,"workers":2,"config":{"slice-us":100}}`,
	} {
		_, _, err := ReadAll(strings.NewReader(hdr+"\n"), "h.jsonl")
		if err == nil || !strings.HasPrefix(err.Error(), "h.jsonl:1: header: ") || !strings.HasSuffix(err.Error(), `is trace format v1.1: add "minor":1 to the header`) {
			t.Errorf("%s: %v", hdr, err)
		}
	}
	for _, text := range []string{
		"execspec-trace v1 workers=1\n#1 out stop\n",
		"execspec-trace v1 workers=1\n#1 w0 poll-begin t1 f2\n",
		"execspec-trace v1 workers=1\n#1 out spawn t1 -> global prio=2\n",
		"execspec-trace v1 workers=1\n#1 out wake @5ns\n",
	} {
		_, _, err := ParseText(strings.NewReader(text))
		if err == nil || !strings.HasPrefix(err.Error(), "line 2: ") || !strings.HasSuffix(err.Error(), `is trace format v1.1: add "minor":1 to the header`) {
			t.Errorf("%q: %v", text, err)
		}
	}
	if _, _, err := ParseText(strings.NewReader("execspec-trace v1 workers=1 order=seq\n")); err == nil || !strings.Contains(err.Error(), `add "minor":1`) {
		t.Errorf("order in a v1 text header: %v", err)
	}
}

// What v1.1 still rejects, with the reason.
func TestV11Rejects(t *testing.T) {
	const v11 = `{"format":"execspec-trace","version":1,"workers":2,"minor":1}` + "\n"
	for line, want := range map[string]string{
		`{"seq":1,"kind":"wake","outcome":"scheduled"}`:                           "a wake that names no task has neither",
		`{"seq":1,"kind":"wake","queue":"global"}`:                                "a wake that names no task has neither",
		`{"seq":1,"kind":"take","task":1,"worker":0,"future":1}`:                  "only poll-begin, poll-end and register drive a future",
		`{"seq":1,"kind":"poll-begin","task":1,"worker":0,"future":0}`:            "future: 0 is out of range",
		`{"seq":1,"kind":"poll-begin","task":1,"worker":0,"priority":1}`:          "only spawn, wake and requeue set a task's priority",
		`{"seq":1,"kind":"spawn","task":1,"priority":2147483648}`:                 "priority: 2147483648 is out of range",
		`{"seq":1,"kind":"park","worker":0,"time":-1}`:                            "time: -1 is out of range",
		`{"seq":1,"kind":"stop","task":3}`:                                        "a stop is about a worker, not a task",
		`{"seq":1,"kind":"poll-end","task":1,"worker":0,"result":"errors"}`:       `unknown poll result "errors"`,
		`{"seq":1,"kind":"poll-begin","task":1,"worker":0,"future":1,"future":2}`: `field "future" appears twice`,
	} {
		_, _, err := ReadAll(strings.NewReader(v11+line+"\n"), "r.jsonl")
		if err == nil || !strings.HasPrefix(err.Error(), "r.jsonl:2: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
	for hdr, want := range map[string]string{
		`{"format":"execspec-trace","version":1,"workers":2,"minor":2}`:                              "unknown trace minor version 2",
		`{"format":"execspec-trace","version":1,"workers":2,"minor":1,"order":"ticks"}`:              `order "ticks"`,
		`{"format":"execspec-trace","version":1,"workers":2,"minor":1,"unobserved":["take","take"]}`: `unobserved names "take" twice`,
		`{"format":"execspec-trace","version":1,"workers":2,"minor":1,"unobserved":["wake"]}`:        `unobserved "wake"`,
		`{"format":"execspec-trace","version":1,"workers":2,"minor":1,"unobserved":null}`:            "unobserved is null, want an array of names",
		`{"format":"execspec-trace","version":1,"workers":2,"minor":1,"minor":1}`:                    `key "minor" given twice`,
	} {
		_, _, err := ReadAll(strings.NewReader(hdr+"\n"), "h.jsonl")
		if err == nil || !strings.HasPrefix(err.Error(), "h.jsonl:1: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", hdr, err, want)
		}
	}
	// A Writer refuses what its Reader would.
	if _, err := NewWriter(&bytes.Buffer{}, Header{Workers: 1, Order: OrderIntervals}); err == nil {
		t.Error("writer accepts order in a v1.0 header")
	}
	w, err := NewWriter(&bytes.Buffer{}, Header{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Event{Seq: 1, Kind: KindStop, Worker: -1}); err == nil {
		t.Error("writer writes a stop in a v1.0 trace")
	}
	if _, ok := Pack(Event{Seq: 1, Kind: KindPollBegin, Task: 1, Future: 2}); ok {
		t.Error("Pack drops a future id")
	}
}
