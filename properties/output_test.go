package properties_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/execspec/execspec/internal/testenv"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
)

// TestRunOutputBounded runs the suite through Run, as a user's test does,
// on an executor that loses wakes, in a child process (the failure is the
// point), and reads what the user sees: one failure, at most 60 lines, a
// file with the full detail that exists, and a replay command that
// reproduces the failure.
func TestRunOutputBounded(t *testing.T) {
	if os.Getenv("EXECSPEC_RUN_CHILD") == "1" {
		for _, b := range broken.Catalogue() {
			if b.Name == "lost-wakeup" {
				properties.Run(t, b.New, properties.Checks(50))
			}
		}
		return
	}
	testenv.Slow(t, "runs a child process")
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunOutputBounded$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "EXECSPEC_RUN_CHILD=1")
	out, _ := cmd.CombinedOutput()
	s := string(out)
	fails := regexp.MustCompile(`(?m)^\s+engine\.go:\d+: .*\n\s+found by the cases of`).FindAllStringIndex(s, -1)
	if len(fails) != 1 {
		t.Fatalf("want exactly one failure reported for one defect, got %d:\n%s", len(fails), s)
	}
	// The failure's block: from its first line to the next test line.
	block := s[fails[0][0]:]
	if j := strings.Index(block, "\n=== "); j >= 0 {
		block = block[:j]
	}
	lines := strings.Split(strings.TrimRight(block, "\n"), "\n")
	if len(lines) > 60 {
		t.Errorf("the failure takes %d lines, more than 60:\n%s", len(lines), block)
	}
	for _, l := range lines {
		if len(l) > 320 {
			t.Errorf("a line of %d characters: %.100s…", len(l), l)
		}
	}
	m := regexp.MustCompile(`full detail: (\S+)`).FindStringSubmatch(block)
	if m == nil {
		t.Fatalf("no file with the full detail:\n%s", block)
	}
	detail, err := os.ReadFile(dir + "/" + m[1])
	if err != nil {
		t.Fatalf("the detail file: %v", err)
	}
	if !strings.Contains(string(detail), "rapid's report") || !strings.Contains(string(detail), "what each task saw") {
		t.Errorf("the detail file lacks the full detail:\n%.500s", detail)
	}
	rm := regexp.MustCompile(`replay: go test -run '(\^TestRunOutputBounded\$/\^[^']+)' -rapid\.failfile='(testdata/rapid/[^']+\.fail)'`).FindStringSubmatch(block)
	if rm == nil {
		t.Fatalf("no one-line replay command:\n%s", block)
	}
	// The replay command, run in the same place, fails the same way.
	first := strings.SplitN(strings.TrimSpace(block), "\n", 2)[0]
	first = first[strings.Index(first, ": ")+2:]
	replay := exec.Command(os.Args[0], "-test.run="+rm[1], "-rapid.failfile="+rm[2], "-test.v")
	replay.Dir = dir
	replay.Env = cmd.Env
	rout, _ := replay.CombinedOutput()
	if !strings.Contains(string(rout), first) {
		t.Errorf("the replay did not fail with %q:\n%s", first, rout)
	}
	t.Logf("what the user sees (%d lines):\n%s", len(lines), block)
}
