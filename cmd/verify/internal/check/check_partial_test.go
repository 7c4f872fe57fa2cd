package check

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/cmd/verify/internal/clitest"
	"github.com/execspec/execspec/internal/partialgen"
	"github.com/execspec/execspec/traces"
)

// TestCheckPartial runs verify check and verify replay on the partially
// observed traces under testdata/check: exit codes, and what the output
// must say, the rules not checked included.
func TestCheckPartial(t *testing.T) {
	notChecked := []string{"not checked (11 rules)", "take-rules (POLL-LOCAL, GLOBAL-STEAL, WORKER-STEAL): needs the queues replayed", "wake-outcome (WAKE): outcome unobserved"}
	runCases(t, []commandCase{
		{[]string{"check", td("partial_conforms.jsonl")}, cli.ExitHolds,
			append([]string{"16 events of tokio-wrapper", "partially observed (unobserved: take, queue, outcome)", "verdict: holds (for the 10 rules checked; 11 rules could not be checked", "fairness, wake → next poll: 2 waits"}, notChecked...), nil},
		{[]string{"check", td("partial_lost_wakeup.jsonl")}, cli.ExitUnknown,
			append([]string{"verdict: unknown", "lost wakeups (woken after their last poll began, never polled again, not DONE): t1"}, notChecked...), nil},
		{[]string{"check", td("partial_poll_after_ready.jsonl")}, cli.ExitViolated,
			append([]string{"VIOLATION at event 8 (line 9)", "rule:    TASK-COMPLETE", "done-is-final fails", "t1 DONE since event 6", "->      8  #8 w1 poll-begin t1"}, notChecked...), nil},
		{[]string{"check", td("partial_concurrent_poll.jsonl")}, cli.ExitViolated,
			[]string{"VIOLATION at event 7 (line 8)", "exclusive-poll fails", "t1 RUNNING on w0 since event 6"}, nil},
		{[]string{"check", "--linearizability", td("partial_conforms.jsonl")}, cli.ExitUsage, nil, []string{"--linearizability", "unobserved: take, queue, outcome"}},
		{[]string{"check", td("partial_starved.jsonl")}, cli.ExitHolds, []string{"verdict: holds", "fairness, spawn → first poll: 3 waits; at most 6 polls of other tasks (t1)"}, nil},
		{[]string{"check", "--fair-bound", "5", td("partial_starved.jsonl")}, cli.ExitViolated,
			[]string{"VIOLATION at event 21 (line 22)", "t1 waited 6 polls of other tasks since its spawn at event 1: more than the bound of 5 (bounded-fairness fails)"}, nil},
		{[]string{"check", "--fair-bound", "6", td("partial_starved.jsonl")}, cli.ExitHolds, []string{"verdict: holds (for the 11 rules checked"}, nil},
		{[]string{"check", "--fair-bound", "6", td("conforms.jsonl")}, cli.ExitUsage, nil, []string{"--fair-bound", "fully observed"}},
		{[]string{"replay", td("partial_conforms.jsonl")}, cli.ExitUsage, nil, []string{"cannot replay", "partially observed", "verify check"}},
	})
}

func TestCheckPartialJSON(t *testing.T) {
	v, out := clitest.RunJSON[partialJSON](t, verify, cli.ExitViolated, "check", "--json", td("partial_concurrent_poll.jsonl"))
	if v.Verdict != "violated" || !v.Partial || v.Violation == nil || v.Violation.Number != 7 || v.Violation.Premise != "exclusive-poll" || len(v.Violation.Before) != 6 {
		t.Errorf("json: %s", out)
	}
	v, out = clitest.RunJSON[partialJSON](t, verify, cli.ExitHolds, "check", "--json", td("partial_conforms.jsonl"))
	if v.Verdict != "holds" || len(v.Unchecked) != 11 || v.Unchecked[0].Reason == "" || len(v.Checked) != 10 || v.WakeDelay.Waits != 2 || len(v.WorkerPolls) != 2 {
		t.Errorf("json: %s", out)
	}
	var raw map[string]any
	json.Unmarshal([]byte(out), &raw)
	if _, ok := raw["unchecked"].([]any)[0].(map[string]any)["reason"]; !ok {
		t.Errorf("unchecked rules carry no reason: %s", out)
	}
}

// TestCheckPartialPictures: --html and --chrome draw a partial trace.
func TestCheckPartialPictures(t *testing.T) {
	if _, html, _ := checkPictures(t, td("partial_poll_after_ready.jsonl")); !strings.Contains(html, "done-is-final") {
		t.Errorf("the page does not mark the violation")
	}
}

// writePartial writes a generated partial trace of about n events.
func writePartial(tb testing.TB, name string, n int) {
	f, err := os.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	w, err := traces.NewWriter(bw, partialgen.Header(4))
	if err != nil {
		tb.Fatal(err)
	}
	partialgen.Generate(partialgen.Options{Workers: 4, Live: 512, Events: n, Seed: 1}, func(e traces.Event) {
		if err := w.Write(e); err != nil {
			tb.Fatal(err)
		}
	})
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

func TestCheckPartialGenerated(t *testing.T) {
	name := filepath.Join(t.TempDir(), "gen.jsonl")
	writePartial(t, name, 20000)
	if code, out, errs := run(t, "check", name); code != cli.ExitHolds {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

// BenchmarkCheckPartial is verify check on a 1e6-event tokio-style partial
// trace (internal/partialgen), reading included.
//
//	go test -run '^$' -bench CheckPartial -benchtime 5x ./cmd/verify/internal/check/
func BenchmarkCheckPartial(b *testing.B) {
	name := filepath.Join(b.TempDir(), "partial.jsonl")
	writePartial(b, name, 1_000_000)
	benchCheck(b, name)
}
