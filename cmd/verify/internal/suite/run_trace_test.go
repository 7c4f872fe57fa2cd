package suite

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/execspec/execspec/cmd/verify/internal/check"
	"github.com/execspec/execspec/cmd/verify/internal/clitest"
	"github.com/execspec/execspec/traces"
)

// verify run marks a failure's trace with the event verify check blames:
// runMark and check agree on the root cause.
func TestRunMarkIsCheckRootCause(t *testing.T) {
	file := filepath.Join("..", "..", "..", "..", "examples", "traces", "steal_with_local_work.jsonl")
	h, events, err := traces.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	mark := runMark(&out, h, events, "some-property: it failed")
	_, text, _ := clitest.Commands(check.Check).Run(t, "check", file)
	c := regexp.MustCompile(`VIOLATION at event (\d+) `).FindStringSubmatch(text)
	if c == nil || fmt.Sprint(mark.Index+1) != c[1] || mark.Symptom == nil {
		t.Fatalf("run marks event %d (symptom %v), check blames %v", mark.Index+1, mark.Symptom, c)
	}
	if !strings.Contains(out.String(), "root cause: event 10 ") {
		t.Errorf("run prints %q, want the root cause", out.String())
	}
	// A trace that conforms: the property is the mark.
	h, events, err = traces.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "traces", "conforms.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if m := runMark(&out, h, events, "p: x"); m.Index != -1 || m.Message != "p: x" {
		t.Errorf("mark %+v for a trace that conforms", m)
	}
}
