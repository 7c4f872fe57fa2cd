package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A trace whose events, in Seq order, are a legal run, but whose call and
// return ticks say that task 2 was taken from the FIFO global queue, and
// the take returned, before task 1 (pushed first) was taken: conformance
// holds, linearizability is violated, and porcupine's visualization is
// written where --lin-html says (and nowhere without it).
func TestCheckLinearizabilityViolation(t *testing.T) {
	dir, file := linTrace(t)
	page := filepath.Join(dir, "run.lin.html")
	if code, _, _ := run(t, "check", "--linearizability", file); code != exitViolated {
		t.Fatalf("exit %d, want %d", code, exitViolated)
	}
	if _, err := os.Stat(page); err == nil {
		t.Fatal("a page was written beside the input without --lin-html")
	}
	code, out, errs := run(t, "check", "--linearizability", "--lin-html", page, file)
	if code != exitViolated {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitViolated, out, errs)
	}
	wantAll(t, "stdout", out, "verdict: holds", "linearizability: violated", "global", "visualization: "+page)
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "take-head") {
		t.Error("the visualization does not show the takes")
	}
	// Without the flag, the same trace conforms.
	if code, out, _ := run(t, "check", file); code != exitHolds {
		t.Fatalf("without --linearizability: exit %d\n%s", code, out)
	}
}

// The execspec timeline links porcupine's page when the linearizability
// check wrote one.
func TestCheckTimelineLinksLinearizabilityPage(t *testing.T) {
	dir, file := linTrace(t)
	page := filepath.Join(dir, "run.html")
	if code, out, errs := run(t, "check", "--linearizability", "--lin-html", filepath.Join(dir, "run.lin.html"), "--html", page, file); code != exitViolated {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"Links":{"linearizability: porcupine's page for this trace":"run.lin.html"}`) {
		t.Errorf("the timeline does not link run.lin.html")
	}
}

// linTrace copies testdata/lin/fifo_out_of_order.jsonl into a new
// directory as run.jsonl (pages are written beside or around it) and
// returns the directory and the copy.
func linTrace(t *testing.T) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "lin", "fifo_out_of_order.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "run.jsonl")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}
