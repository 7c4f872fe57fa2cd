package traces

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/model"
)

var hdr2 = Header{Format: Format, Version: Version, Executor: "worksteal", Workers: 2, Policy: "worksteal", Config: map[string]int{"local-cap": 4}}

// sample is a short run of a two-worker executor: a spawn from outside, a
// take from the global queue, a pending poll, a wake, a steal, completion.
var sample = []Event{
	{Seq: 1, Kind: KindSpawn, Task: 1, Worker: -1, Victim: -1, Queue: QueueGlobal},
	{Seq: 2, Kind: KindTake, Task: 1, Worker: 0, Victim: -1, Source: SourceGlobal},
	{Seq: 3, Kind: KindPollBegin, Task: 1, Worker: 0, Victim: -1},
	{Seq: 4, Kind: KindSpawn, Task: 2, Worker: 0, Victim: -1, Queue: LocalQueue(0), Call: 4, Return: 5},
	{Seq: 6, Kind: KindPollEnd, Task: 1, Worker: 0, Victim: -1, Result: ResultPending},
	{Seq: 7, Kind: KindTake, Task: 2, Worker: 1, Victim: 0, Source: SourceSteal},
	{Seq: 8, Kind: KindWake, Task: 1, Worker: 1, Victim: -1, Outcome: OutcomeScheduled, Queue: LocalQueue(1)},
	{Seq: 9, Kind: KindPark, Worker: 0, Victim: -1},
	{Seq: 10, Kind: KindPanic, Task: 2, Worker: 1, Victim: -1, Detail: "boom\n\tgoroutine 7 \"x\" ☃"},
	{Seq: 11, Kind: KindPollEnd, Task: 2, Worker: 1, Victim: -1, Result: ResultPanic},
	{Seq: 12, Kind: KindStep, Task: 1, Worker: 1, Victim: -1, Rule: model.POLL_PENDING},
}

const sampleJSON = `{"format":"execspec-trace","version":1,"executor":"worksteal","workers":2,"policy":"worksteal","config":{"local-cap":4}}
{"seq":1,"kind":"spawn","task":1,"queue":"global"}
{"seq":2,"kind":"take","task":1,"worker":0,"source":"global"}
{"seq":3,"kind":"poll-begin","task":1,"worker":0}
{"seq":4,"kind":"spawn","task":2,"worker":0,"queue":"local:0","call":4,"ret":5}
{"seq":6,"kind":"poll-end","task":1,"worker":0,"result":"pending"}
{"seq":7,"kind":"take","task":2,"worker":1,"source":"steal","victim":0}
{"seq":8,"kind":"wake","task":1,"worker":1,"queue":"local:1","outcome":"scheduled"}
{"seq":9,"kind":"park","worker":0}
{"seq":10,"kind":"panic","task":2,"worker":1,"detail":"boom\n\tgoroutine 7 \"x\" ☃"}
{"seq":11,"kind":"poll-end","task":2,"worker":1,"result":"panic"}
{"seq":12,"kind":"step","task":1,"worker":1,"rule":"POLL-PENDING"}
`

const sampleText = `execspec-trace v1 executor=worksteal workers=2 policy=worksteal local-cap=4
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0 call=4 ret=5
#6 w0 poll-end t1 pending
#7 w1 take t2 steal from w0
#8 w1 wake t1 -> local:1 scheduled
#9 w0 park
#10 w1 panic t2 detail="boom\n\tgoroutine 7 \"x\" ☃"
#11 w1 poll-end t2 panic
#12 w1 step t1 rule=POLL-PENDING
`

func TestWriteGolden(t *testing.T) {
	checkGolden(t, WriteAll, sampleJSON, func(s string) (Header, []Event, error) {
		return ReadAll(strings.NewReader(s), "sample.jsonl")
	})
}

func TestTextGolden(t *testing.T) {
	checkGolden(t, WriteText, sampleText, func(s string) (Header, []Event, error) {
		return ParseText(strings.NewReader("// a comment\n\n" + s))
	})
	if got, want := FormatEvent(sample[5]), "#7 w1 take t2 steal from w0"; got != want {
		t.Errorf("FormatEvent = %q, want %q", got, want)
	}
}

// checkGolden writes the sample with write and compares it with want, then
// reads want back with read: the header and the events must be the
// sample's.
func checkGolden(t *testing.T, write func(io.Writer, Header, []Event) error, want string, read func(string) (Header, []Event, error)) {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf, hdr2, sample); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != want {
		t.Errorf("written trace:\n%s\nwant:\n%s", got, want)
	}
	h, events, err := read(want)
	if err != nil {
		t.Fatal(err)
	}
	if h.Executor != "worksteal" || h.Workers != 2 || h.Config["local-cap"] != 4 {
		t.Errorf("header = %+v", h)
	}
	assertEvents(t, events, sample)
}

type fataler interface {
	Helper()
	Fatalf(string, ...any)
}

func assertEvents(t fataler, got, want []Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != canonical(want[i]) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got[i], canonical(want[i]))
		}
	}
}

// validDetail makes a drawn detail string survive the round trip: the
// writer replaces invalid UTF-8.
func validDetail(e Event) Event {
	if !utf8.ValidString(e.Detail) {
		e.Detail = strings.ToValidUTF8(e.Detail, "\uFFFD")
	}
	return e
}

func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHeader().Draw(t, "header")
		events := rapid.SliceOfN(genEvent(h), 0, 30).Draw(t, "events")
		for i := range events {
			events[i] = validDetail(events[i])
		}
		var js, txt bytes.Buffer
		if err := WriteAll(&js, h, events); err != nil {
			t.Fatal(err)
		}
		if err := WriteText(&txt, h, events); err != nil {
			t.Fatal(err)
		}
		for name, read := range map[string]func() (Header, []Event, error){
			"json": func() (Header, []Event, error) { return ReadAll(bytes.NewReader(js.Bytes()), "rt") },
			"text": func() (Header, []Event, error) { return ParseText(bytes.NewReader(txt.Bytes())) },
		} {
			h2, got, err := read()
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, js.String())
			}
			if h2.Executor != h.Executor || h2.Workers != h.Workers || h2.Policy != h.Policy || len(h2.Config) != len(h.Config) {
				t.Fatalf("%s: header %+v, want %+v", name, h2, h)
			}
			for k, v := range h.Config {
				if h2.Config[k] != v {
					t.Fatalf("%s: config %v, want %v", name, h2.Config, h.Config)
				}
			}
			assertEvents(t, got, events)
		}
	})
}

// TestBadInput: each kind of bad input is an *Error with the line and a
// message saying what was expected.
func TestBadInput(t *testing.T) {
	const h = `{"format":"execspec-trace","version":1,"executor":"x","workers":2,"policy":"fifo"}` + "\n"
	const ok = `{"seq":1,"kind":"spawn","task":1,"queue":"global"}` + "\n"
	cases := []struct {
		name, in string
		kind     error
		line     int
		msg      string
	}{
		{"empty", "", ErrMissingHeader, 0, "empty trace"},
		{"no header", ok, ErrMissingHeader, 1, "first line is an event"},
		{"not a header", `{"a":1}` + "\n", ErrMissingHeader, 1, `no "format"`},
		{"other format", `{"format":"otel","version":1,"workers":1}` + "\n", ErrVersion, 1, `unknown trace format "otel"`},
		{"version 2", `{"format":"execspec-trace","version":2,"workers":1,"later":true}` + "\n", ErrVersion, 1, "unknown trace version 2"},
		{"no version", `{"format":"execspec-trace","workers":1}` + "\n", ErrVersion, 1, "without a version"},
		{"unknown header field", `{"format":"execspec-trace","version":1,"workers":1,"colour":"red"}` + "\n", ErrUnknown, 1, `unknown field "colour"`},
		{"zero workers", `{"format":"execspec-trace","version":1,"workers":0}` + "\n", ErrRange, 1, "workers = 0"},
		{"truncated header", `{"format":"execspec-tr`, ErrTruncated, 1, "truncated"},
		{"truncated", h + ok + `{"seq":2,"kind":"ta`, ErrTruncated, 3, "truncated trace"},
		{"bad json", h + `{"seq":1,"kind":"spawn",}` + "\n", ErrSyntax, 2, "bad JSON at byte 25"},
		{"not an object", h + `[1,2]` + "\n", ErrSyntax, 2, "'{' to start an event object"},
		{"trailing text", h + `{"seq":1,"kind":"park","worker":0} x` + "\n", ErrSyntax, 2, "end of the line"},
		{"unknown kind", h + ok + `{"seq":2,"kind":"yield","task":1,"worker":0}` + "\n", ErrUnknown, 3, `unknown event kind "yield"`},
		{"unknown field", h + `{"seq":1,"kind":"spawn","task":1,"prio":3}` + "\n", ErrUnknown, 2, `unknown field "prio"`},
		{"unknown source", h + `{"seq":1,"kind":"take","task":1,"worker":0,"source":"remote"}` + "\n", ErrUnknown, 2, `unknown take source "remote"`},
		{"unknown queue", h + `{"seq":1,"kind":"spawn","task":1,"queue":"local:x"}` + "\n", ErrUnknown, 2, `unknown queue "local:x"`},
		{"unknown rule", h + `{"seq":1,"kind":"step","task":1,"rule":"POLL"}` + "\n", ErrUnknown, 2, `unknown rule "POLL"`},
		{"task 0", h + `{"seq":1,"kind":"spawn","task":0}` + "\n", ErrRange, 2, "without a task"},
		{"task -3", h + `{"seq":1,"kind":"wake","task":-3}` + "\n", ErrRange, 2, "task -3"},
		{"worker 2 of 2", h + `{"seq":1,"kind":"take","task":1,"worker":2,"source":"global"}` + "\n", ErrRange, 2, "worker 2: the header declares 2 workers"},
		{"victim 5", h + `{"seq":1,"kind":"take","task":1,"worker":1,"source":"steal","victim":5}` + "\n", ErrRange, 2, "steal from worker 5"},
		{"queue of worker 9", h + `{"seq":1,"kind":"spawn","task":1,"queue":"local:9"}` + "\n", ErrRange, 2, "queue local:9"},
		{"victim on local", h + `{"seq":1,"kind":"take","task":1,"worker":1,"source":"local","victim":0}` + "\n", ErrUnknown, 2, "not a steal"},
		{"poll-end without result", h + `{"seq":1,"kind":"poll-end","task":1,"worker":1}` + "\n", ErrUnknown, 2, "without a result"},
		{"take without worker", h + `{"seq":1,"kind":"take","task":1}` + "\n", ErrRange, 2, "take event without a worker"},
		{"float", h + `{"seq":1.5,"kind":"park","worker":0}` + "\n", ErrUnknown, 2, "not an integer"},
		{"duplicate field", h + `{"seq":1,"seq":2,"kind":"park","worker":0}` + "\n", ErrSyntax, 2, "appears twice"},
		{"null", h + `{"seq":1,"kind":"park","worker":null}` + "\n", ErrUnknown, 2, "null"},
		{"no kind", h + `{"seq":1}` + "\n", ErrUnknown, 2, `without a "kind"`},
		{"too long", h + `{"seq":1,"kind":"park","worker":0,"detail":"` + strings.Repeat("x", 2000) + `"}` + "\n", ErrLineTooLong, 2, "longer than 1024 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReaderSize(strings.NewReader(c.in), "bad.jsonl", 1024)
			if err == nil {
				for {
					if _, err = r.Next(); err != nil {
						break
					}
				}
			}
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("error %q is not %v", err, c.kind)
			}
			if te.Line != c.line || te.File != "bad.jsonl" {
				t.Errorf("error at %s:%d, want bad.jsonl:%d", te.File, te.Line, c.line)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not say %q", err, c.msg)
			}
			// The error is sticky.
			if r != nil {
				if _, err2 := r.Next(); err2 != err {
					t.Errorf("second Next = %v, want the same error", err2)
				}
			}
		})
	}
}

func TestLastLineWithoutNewline(t *testing.T) {
	in := strings.TrimSuffix(sampleJSON, "\n")
	_, events, err := ReadAll(strings.NewReader(in), "")
	if err != nil {
		t.Fatal(err)
	}
	assertEvents(t, events, sample)
	// CRLF line ends and blank lines are accepted too.
	in = strings.ReplaceAll(sampleJSON, "\n", "\r\n\r\n")
	if _, events, err = ReadAll(strings.NewReader(in), ""); err != nil {
		t.Fatal(err)
	}
	assertEvents(t, events, sample)
}

func TestDecoderAcceptsAnyJSONSpelling(t *testing.T) {
	const h = `{"format":"execspec-trace","version":1,"workers":2}` + "\n"
	in := h + ` { "detail" : "a\u00e9\ud83d\ude00\/\b" , "worker": 1, "kind":"\u0070anic" ,"seq":0,"task":7} ` + "\n"
	_, events, err := ReadAll(strings.NewReader(in), "")
	if err != nil {
		t.Fatal(err)
	}
	want := Event{Kind: KindPanic, Task: 7, Worker: 1, Victim: -1, Detail: "aé😀/\b"}
	if events[0] != want {
		t.Errorf("got %+v, want %+v", events[0], want)
	}
}

func TestAll(t *testing.T) {
	r, err := NewReader(strings.NewReader(sampleJSON+`{"seq":13,"kind":"oops"}`+"\n"+`{"seq":14,"kind":"park","worker":0}`+"\n"), "x")
	if err != nil {
		t.Fatal(err)
	}
	n, errs := 0, 0
	for _, err := range r.All() {
		if err != nil {
			errs++
			if !strings.Contains(err.Error(), "x:13:") {
				t.Errorf("error %q, want it at x:13", err)
			}
			continue
		}
		n++
	}
	if n != len(sample) || errs != 1 {
		t.Errorf("All gave %d events and %d errors, want %d and 1", n, errs, len(sample))
	}
}

func TestWriterRejectsInvalid(t *testing.T) {
	w, err := NewWriter(io.Discard, Header{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Event{
		{Kind: 0},
		{Kind: KindTake, Task: 1, Worker: 1},
		{Kind: KindSpawn, Task: 0, Worker: -1},
		{Kind: KindPollEnd, Task: 1, Worker: 0},
		{Kind: KindWake, Task: 1, Worker: -1, Source: SourceLocal},
	} {
		if err := w.Write(e); err == nil {
			t.Errorf("Write(%+v) = nil, want an error", e)
		}
	}
	if _, err := NewWriter(io.Discard, Header{Workers: 0}); err == nil {
		t.Error("NewWriter with 0 workers: no error")
	}
}

func TestTextBadInput(t *testing.T) {
	const h = "execspec-trace v1 executor=x workers=2 policy=fifo\n"
	cases := []struct{ name, in, msg string }{
		{"empty", "", "missing header"},
		{"event first", "#1 out spawn t1\n", "first line is an event"},
		{"version", "execspec-trace v2 workers=1\n", `unknown trace version "v2"`},
		{"no workers", "execspec-trace v1 executor=x\n", "workers=N missing"},
		{"short", h + "#1 w0\n", "line 2: want \"#SEQ WHO KIND"},
		{"kind", h + "#1 w0 yield t1\n", `line 2: unknown event kind "yield"`},
		{"worker", h + "#1 w7 take t1 global\n", "line 2: take event on worker 7"},
		{"token", h + "#1 w0 take t1 sideways\n", `line 2: "sideways": want`},
		{"twice", h + "#1 w0 take t1 t2 global\n", "given twice"},
		{"quote", h + "#1 w0 panic t1 detail=\"abc\n", "bad quoted string"},
		{"from", h + "#1 w0 take t1 local from w1\n", "not a steal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ParseText(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("ParseText error %v, want one saying %q", err, c.msg)
			}
		})
	}
}

func TestEnumText(t *testing.T) {
	for k := KindSpawn; k <= KindStep; k++ {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var k2 Kind
		if err := k2.UnmarshalText(b); err != nil || k2 != k {
			t.Errorf("Kind %v: round trip gave %v, %v", k, k2, err)
		}
	}
	if _, err := Kind(0).MarshalText(); err == nil {
		t.Error("Kind(0).MarshalText: no error")
	}
	for q := QueueGlobal; q < 5; q++ {
		var q2 Queue
		b, _ := q.MarshalText()
		if err := q2.UnmarshalText(b); err != nil || q2 != q {
			t.Errorf("Queue %v: round trip gave %v, %v", q, q2, err)
		}
	}
	if LocalQueue(3).String() != "local:3" || QueueGlobal.String() != "global" {
		t.Error("queue names")
	}
	for s := SourceNone; s <= SourceLIFO; s++ {
		var s2 Source
		b, _ := s.MarshalText()
		if err := s2.UnmarshalText(b); err != nil || s2 != s {
			t.Errorf("Source %v: %v %v", s, s2, err)
		}
	}
	for r := ResultNone; r <= ResultPanic; r++ {
		var r2 Result
		b, _ := r.MarshalText()
		if err := r2.UnmarshalText(b); err != nil || r2 != r {
			t.Errorf("Result %v: %v %v", r, r2, err)
		}
	}
	for o := OutcomeNone; o <= OutcomeDropped; o++ {
		var o2 Outcome
		b, _ := o.MarshalText()
		if err := o2.UnmarshalText(b); err != nil || o2 != o {
			t.Errorf("Outcome %v: %v %v", o, o2, err)
		}
	}
	var s Source
	if err := s.UnmarshalText([]byte("far")); err == nil {
		t.Error("Source far: no error")
	}
}

// TestFastPathTaken: what the writer writes is read by the fast decoder;
// other spellings fall to the general one.
func TestFastPathTaken(t *testing.T) {
	for _, line := range strings.Split(strings.TrimSpace(sampleJSON), "\n")[1:] {
		var e Event
		if strings.Contains(line, `\`) {
			continue // escapes in detail are left to the general decoder
		}
		if !decodeFast([]byte(line), &e) {
			t.Errorf("fast decoder declines the writer's line %s", line)
		}
	}
	for _, line := range []string{
		`{"seq":1, "kind":"park","worker":0}`,
		`{"kind":"park","seq":1,"worker":0}`,
		`{"seq":1,"kind":"park","worker":0,"worker":0}`,
		`{"seq":1,"kind":"panic","task":1,"worker":0,"detail":"a\nb"}`,
		`{"seq":01,"kind":"park","worker":0}`,
		`{"seq":1,"kind":"take","task":1,"worker":0,"source":"local","victim":0}`,
	} {
		var e Event
		if decodeFast([]byte(line), &e) {
			t.Errorf("fast decoder accepts %s", line)
		}
	}
}

func TestTextReaderNamesFileAndLine(t *testing.T) {
	in := "// comment\nexecspec-trace v1 executor=x workers=1 policy=fifo\n#1 out spawn t1 -> global\n\n#2 w0 take t1 gobal\n"
	tr, err := NewTextReader(strings.NewReader(in), "run.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Next(); err != nil || tr.Line() != 3 {
		t.Fatalf("first event: %v at line %d", err, tr.Line())
	}
	_, err = tr.Next()
	if err == nil || !strings.HasPrefix(err.Error(), `run.txt:5: "gobal": want`) {
		t.Errorf("error %v, want it at run.txt:5", err)
	}
	if _, err2 := tr.Next(); err2 != err {
		t.Errorf("error not sticky: %v", err2)
	}
}
