package conform

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/internal/frame"
	"github.com/execspec/execspec/traces"
)

// The traces under testdata/conform: text-form traces whose first line
// states the expected result ("// want: holds", "// want: violated at seq
// N: RULE: premise", "// want: unknown: lost wakeups ...; never completed
// ..."), and traces recorded from the built-in executors (*_ok.jsonl), which
// must conform. A text trace may say more in lines of its own: "// reason:
// ..." a piece of a violation's reason, "// report: ..." figures of the
// report (reportFigure). A violation names its event by index, keeps the
// events before it and says which premise failed in which state; a trace
// that holds and does not stop has every task DONE and no finding. The
// v1.1 traces (v11_*.txt) number their events from seq 1
// (checkV11Testdata).
func TestConformanceTestdata(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "conform", "*"))
	v11, _ := filepath.Glob(filepath.Join("testdata", "conform", "v11_*.txt"))
	if err != nil || len(files) == 0 || len(v11) < 10 {
		t.Fatalf("traces under testdata/conform: %d, %d of them v1.1; %v", len(files), len(v11), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			switch {
			case strings.HasSuffix(f, ".txt"):
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				first, _, _ := strings.Cut(string(data), "\n")
				want, ok := strings.CutPrefix(first, "// want: ")
				if !ok {
					t.Fatalf("first line %q: want \"// want: ...\"", first)
				}
				h, events := parseTrace(t, string(data))
				r := checkEvents(t, h, events)
				if got := conformOutcome(r); got != want {
					t.Fatalf("got  %s\nwant %s\n%s", got, want, r.Summary())
				}
				checkTestdataReport(t, string(data), h, r, events)
				if strings.HasPrefix(filepath.Base(f), "v11_") {
					checkV11Testdata(t, h, events, r)
				}
			case strings.HasSuffix(f, "_ok.jsonl"):
				h, events, err := traces.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if r := checkEvents(t, h, events); r.Verdict != checker.Holds {
					t.Fatalf("a recorded trace of a correct executor does not conform:\n%s", r.Summary())
				}
			}
		})
	}
}

// checkTestdataReport checks a text trace's reason and report lines
// against its report r, and what every violation and every trace that
// holds must show.
func checkTestdataReport(t *testing.T, data string, h traces.Header, r *Report, events []traces.Event) {
	t.Helper()
	for _, line := range strings.Split(data, "\n") {
		if reason, ok := strings.CutPrefix(line, "// reason: "); ok && (r.Err == nil || !strings.Contains(r.Err.Reason, reason)) {
			t.Errorf("reason: got %v, want one containing %q", r.Err, reason)
		}
		rep, ok := strings.CutPrefix(line, "// report: ")
		if !ok {
			continue
		}
		for _, item := range strings.Split(rep, "; ") {
			if got := reportFigure(r, item); got != item {
				t.Errorf("report: got %q, want %q\n%s", got, item, r.Summary())
			}
		}
	}
	switch r.Verdict {
	case checker.Violated:
		e := r.Err
		if e.Index < 0 || e.Index >= len(events) || events[e.Index].Seq != e.Event.Seq {
			t.Errorf("Index %d does not point at the event with seq %d", e.Index, e.Event.Seq)
		}
		// A violation found at its own event keeps the events before it
		// that the ring holds; one found later (an order of overlapping
		// intervals settled afterwards) may have lost the oldest.
		n := min(e.Index, frame.RingSize)
		if len(e.Before) > n || (r.Events == e.Index+1 && len(e.Before) != n) || (len(e.Before) > 0 && e.Before[len(e.Before)-1] != events[e.Index-1]) {
			t.Errorf("Before holds %d events, want the %d before the violation", len(e.Before), n)
		}
		// Every premise of a v1.0 trace is a rule's; a v1.1 trace's stop
		// adds findings that are not ("a crash loses no task").
		fails := e.Premise + " fails)"
		if h.Minor == 0 {
			fails = "(premise " + fails
		}
		if !strings.HasPrefix(e.Error(), fmt.Sprintf("event %d (seq %d): ", e.Index+1, e.Event.Seq)) || !strings.HasSuffix(e.Error(), fails) || !strings.HasPrefix(e.State, "global ") {
			t.Errorf("message or state malformed:\n%s\n%s", e.Error(), e.State)
		}
		t.Log(e.Error())
	case checker.Holds:
		if r.Events != len(events) {
			t.Errorf("report counts %d events, want %d", r.Events, len(events))
		}
		if r.Stopped {
			break
		}
		if r.Completed != r.Tasks || r.Tasks == 0 || len(r.LostWakeups) > 0 || len(r.NeverCompleted) > 0 || len(r.Warnings) > 0 {
			t.Errorf("%d of %d tasks done, findings on a correct trace:\n%s", r.Completed, r.Tasks, r.Summary())
		}
	}
}

// conformOutcome states a report in the words of the testdata's want lines.
func conformOutcome(r *Report) string {
	switch r.Verdict {
	case checker.Violated:
		return fmt.Sprintf("violated at seq %d: %s: %s", r.Err.Event.Seq, r.Err.Rule, r.Err.Premise)
	case checker.Unknown:
		return fmt.Sprintf("unknown: lost wakeups %s; never completed %s", frame.TaskList(r.LostWakeups), frame.TaskList(r.NeverCompleted))
	}
	return "holds"
}

// worksteal_due_race_ok.jsonl was recorded from the work-stealing executor
// (3 workers, global check every 2nd take) under a controlled schedule: on
// a global-check take, worker 1 found the global queue empty, another
// thread pushed t4 onto it, and worker 1 then took from its local queue,
// with a call tick drawn after the push. The take conforms because the
// worker began to look right after its previous event, before the push.
func TestConformanceDueRace(t *testing.T) {
	h, events, err := traces.ReadFile(filepath.Join("testdata", "conform", "worksteal_due_race_ok.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r := checkEvents(t, h, events)
	if r.Verdict != checker.Holds || r.Relaxed == 0 {
		t.Fatalf("verdict %s, %d relaxed; want holds, thanks to the window\n%s", r.Verdict, r.Relaxed, r.Summary())
	}
}
