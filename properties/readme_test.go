package properties_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeCustomExecutor keeps the "Write your own executor" section of
// README.md true: its code is examples/customexec/customexec.go, verbatim,
// and that module builds, vets and records traces that conform (its own
// test runs the suite on it: cd examples/customexec && go test ./...).
func TestReadmeCustomExecutor(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("..", "examples", "customexec", "customexec.go"))
	if err != nil {
		t.Fatal(err)
	}
	r := string(readme)
	i := strings.Index(r, "## Write your own executor")
	if i < 0 {
		t.Fatal(`README.md has no "Write your own executor" section`)
	}
	start := strings.Index(r[i:], "```go\n")
	if start < 0 {
		t.Fatal("the section has no Go code block")
	}
	body := r[i+start+len("```go\n"):]
	end := strings.Index(body, "```")
	if end < 0 {
		t.Fatal("the section's code block does not end")
	}
	if got := body[:end]; got != string(src) {
		t.Errorf("README.md's custom executor differs from examples/customexec/customexec.go; copy it over")
	}
	if n := strings.Count(string(src), "\n"); n > 60 {
		t.Errorf("examples/customexec/customexec.go has %d lines; the promise is at most 60", n)
	}
	if testing.Short() {
		return
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = filepath.Join("..", "examples", "customexec")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("examples/customexec does not vet: %v\n%s", err, out)
	}
	// Its recorded traces conform to its policy, and conformance catches
	// a Kit executor that pushes a task twice (a few seconds; the whole
	// suite runs with that module's go test).
	cmd = exec.Command("go", "test", "-short", "-count=1", "-run", "Conformance", ".")
	cmd.Dir = filepath.Join("..", "examples", "customexec")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("examples/customexec's conformance tests fail: %v\n%s", err, out)
	}
}

// TestOwnExecModule: examples/ownexec, an executor with its own task type
// on the Kit's pieces, vets and its Join outcomes hold (its own go test
// runs the whole suite on it).
func TestOwnExecModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds another module")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "-run", "JoinOutcomes|GlueLines", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = filepath.Join("..", "examples", "ownexec")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("examples/ownexec: go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
