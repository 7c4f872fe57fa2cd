package traces

import (
	"bytes"
	"strings"
	"testing"
)

// TestStopReason: a stop's reason is written, read back (JSON and text),
// absent for a shutdown, and refused on another kind or with an unknown
// value, with the line.
func TestStopReason(t *testing.T) {
	h := Header{Format: Format, Version: Version, Minor: 1, Executor: "x", Workers: 1, Policy: "fifo"}
	evs := []Event{
		{Seq: 1, Kind: KindStop, Worker: -1, Victim: -1, Reason: StopPanic},
		{Seq: 2, Kind: KindStop, Worker: 0, Victim: -1, Reason: StopUnwound},
		{Seq: 3, Kind: KindStop, Worker: -1, Victim: -1},
	}
	var b bytes.Buffer
	if err := WriteAll(&b, h, evs); err != nil {
		t.Fatal(err)
	}
	js := b.String()
	if !strings.Contains(js, `"kind":"stop","reason":"panic"`) || strings.Contains(js, `"reason":"shutdown"`) {
		t.Fatalf("written:\n%s", js)
	}
	_, got, err := ReadAll(strings.NewReader(js+`{"seq":4,"kind":"stop","reason":"shutdown"}`+"\n"), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []StopReason{StopPanic, StopUnwound, StopShutdown, StopShutdown}
	for i, e := range got {
		if e.Reason != want[i] {
			t.Errorf("event %d: reason %v, want %v", i+1, e.Reason, want[i])
		}
	}
	var tb bytes.Buffer
	if err := WriteText(&tb, h, evs); err != nil {
		t.Fatal(err)
	}
	_, back, err := ParseText(&tb)
	if err != nil || len(back) != 3 || back[0].Reason != StopPanic || back[1].Reason != StopUnwound {
		t.Fatalf("text: %v %+v", err, back)
	}
	head := strings.SplitN(js, "\n", 2)[0] + "\n"
	for _, bad := range []struct{ line, want string }{
		{`{"seq":1,"kind":"stop","reason":"crash"}`, `unknown stop reason "crash"`},
		{`{"seq":1,"kind":"park","worker":0,"reason":"panic"}`, "only a stop has a reason"},
	} {
		_, _, err := ReadAll(strings.NewReader(head+bad.line+"\n"), "t.jsonl")
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "t.jsonl:2") {
			t.Errorf("%s: %v, want an error at t.jsonl:2 with %q", bad.line, err, bad.want)
		}
	}
}
