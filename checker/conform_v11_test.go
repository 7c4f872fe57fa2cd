package checker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The v1.1 traces under testdata/conform (v11_*.txt) number their events
// from seq 1, so that a violation's seq names its index too. Besides the
// want line that TestConformanceTestdata checks, a "// report:" line states
// the v1.1 counts of the report.
func TestConformanceV11Testdata(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "conform", "v11_*.txt"))
	if err != nil || len(files) < 10 {
		t.Fatalf("v1.1 traces under testdata/conform: %d, %v", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h, events := parseTrace(t, string(data))
			if h.Minor != 1 {
				t.Fatalf("%s is not a v1.1 trace", f)
			}
			for i, e := range events {
				if e.Seq != uint64(i+1) {
					t.Fatalf("event %d has seq %d: number the events from seq 1", i, e.Seq)
				}
			}
			r := checkEvents(t, h, events)
			first, _, _ := strings.Cut(string(data), "\n")
			want, _ := strings.CutPrefix(first, "// want: ")
			if got := conformOutcome(r); got != want {
				t.Fatalf("got  %s\nwant %s\n%s", got, want, r.Summary())
			}
			if r.Verdict == Violated && r.Err.Index != int(r.Err.Event.Seq)-1 {
				t.Fatalf("violation at index %d, seq %d", r.Err.Index, r.Err.Event.Seq)
			}
			for _, line := range strings.Split(string(data), "\n") {
				rep, ok := strings.CutPrefix(line, "// report: ")
				if !ok {
					continue
				}
				for _, item := range strings.Split(rep, "; ") {
					if got := v11Figure(r, item); got != item {
						t.Errorf("report: got %q, want %q\n%s", got, item, r.Summary())
					}
				}
			}
		})
	}
}

// v11Figure states the figure a report item names, in its words.
func v11Figure(r *ConformanceReport, item string) string {
	name, _, _ := strings.Cut(item, " ")
	switch name {
	case "stopped":
		if !r.Stopped {
			return "not stopped"
		}
		return fmt.Sprintf("stopped at %d", r.StopIndex+1)
	case "abandoned":
		return "abandoned " + abandonedList(r.Abandoned)
	case "errors":
		return fmt.Sprintf("errors %d", r.ErrorCount)
	case "panics":
		return fmt.Sprintf("panics %d", r.PanicCount)
	case "spurious":
		return fmt.Sprintf("spurious %d", r.SpuriousPolls)
	case "notaskwakes":
		return fmt.Sprintf("notaskwakes %d", r.NoTaskWakes)
	case "relaxed":
		return fmt.Sprintf("relaxed %d", r.Relaxed)
	}
	return "unknown figure " + name
}
