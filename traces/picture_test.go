package traces

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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

// chromium finds a headless Chromium. Without one the test is skipped,
// unless CI is set: there it must run.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI is set but no chromium is installed: install Debian's chromium package (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); the HTML timeline is not checked in a browser")
	return ""
}

// dumpDOM loads file in headless Chromium and returns the DOM after the
// page's script ran.
func dumpDOM(t *testing.T, file string) string {
	bin := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+file)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String()
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
	dom := dumpDOM(t, file)
	// Only the script puts the message into a span.msg inside #violation:
	// finding it there shows the page was drawn, not just written.
	msg := regexp.QuoteMeta(html.EscapeString(lostWakeMark.Message))
	if !regexp.MustCompile(`<div id="violation"[^>]*>.*<span class="msg">` + msg + `</span>`).MatchString(dom) {
		t.Errorf("the rendered page does not show the violation %q in #violation:\n%s", lostWakeMark.Message, dom)
	}
	for _, want := range []string{
		`<tr id="ev-6" class="bad">`,        // the offending event is highlighted in the table
		`id="violation-mark"`,               // and in the timeline
		`class="poll"`,                      // polls are drawn as blocks
		`class="steal"`,                     // the steal of t2 is an arrow
		`class="wake lost"`,                 // the wake that is never followed by a take
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
	data := buf.String()
	i := strings.Index(data, `id="trace-data">`)
	j := strings.Index(data[i:], "</script>")
	var d htmlData
	if err := json.Unmarshal([]byte(data[i+len(`id="trace-data">`):i+j]), &d); err != nil {
		t.Fatal(err)
	}
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
