package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
