package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every `go run ./cmd/verify` example in README.md can be followed: the
// files it names exist in the repository, and the commands that read a
// trace (check, replay) and model --list run on them without a usage or
// input error.
func TestReadmeCommandsRun(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	cmdLine := regexp.MustCompile(`(?m)^go run \./cmd/verify(.*)$`)
	out := t.TempDir()
	ran := 0
	for _, m := range cmdLine.FindAllStringSubmatch(string(b), -1) {
		line := m[1]
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		args := strings.Fields(line)
		for i, a := range args {
			if strings.HasPrefix(a, "examples/") || strings.HasPrefix(a, "docs/") {
				if _, err := os.Stat(a); err != nil {
					t.Errorf("README: %q names %s, which does not exist", m[0], a)
				}
			}
			if i > 0 && (args[i-1] == "--html" || args[i-1] == "--chrome" || args[i-1] == "--lin-html") {
				args[i] = filepath.Join(out, filepath.Base(a)) // write the page elsewhere
			}
		}
		if len(args) == 0 || !(args[0] == "check" || args[0] == "replay" || (args[0] == "model" && len(args) == 2 && args[1] == "--list")) {
			continue // model checking and suite runs are tested elsewhere
		}
		code, stdout, stderr := run(t, args...)
		if code == exitUsage {
			t.Errorf("README: %q exits %d (usage or bad input):\n%s%s", m[0], code, stdout, stderr)
		}
		ran++
	}
	if ran < 6 {
		t.Errorf("ran %d README commands, want the check, replay and model --list examples", ran)
	}
}
