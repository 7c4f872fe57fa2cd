package conform

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

// The traces under testdata/conform: text-form traces whose first line
// states the expected result ("// want: holds", "// want: violated at seq
// N: RULE: premise", "// want: unknown: lost wakeups ...; never completed
// ..."), and traces recorded from the built-in executors (*_ok.jsonl), which
// must conform.
func TestConformanceTestdata(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "conform", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces under testdata/conform: %v", err)
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
				if got := conformOutcome(checkEvents(t, h, events)); got != want {
					t.Fatalf("got  %s\nwant %s", got, want)
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

// conformOutcome states a report in the words of the testdata's want lines.
func conformOutcome(r *Report) string {
	switch r.Verdict {
	case checker.Violated:
		return fmt.Sprintf("violated at seq %d: %s: %s", r.Err.Event.Seq, r.Err.Rule, r.Err.Premise)
	case checker.Unknown:
		return fmt.Sprintf("unknown: lost wakeups %s; never completed %s", taskList(r.LostWakeups), taskList(r.NeverCompleted))
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
