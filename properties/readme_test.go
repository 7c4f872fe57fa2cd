package properties_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/internal/testenv"
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
	testenv.Slow(t, "builds examples/customexec")
	dir := filepath.Join("..", "examples", "customexec")
	testenv.Go(t, dir, "vet", "./...")
	// Its recorded traces conform to its policy, and conformance catches
	// a Kit executor that pushes a task twice (a few seconds; the whole
	// suite runs with that module's go test).
	testenv.Go(t, dir, "test", "-short", "-count=1", "-run", "Conformance", ".")
}

// TestOwnExecModule: examples/ownexec, an executor with its own task type
// on the Kit's pieces, vets and its Join outcomes hold (its own go test
// runs the whole suite on it).
func TestOwnExecModule(t *testing.T) {
	testenv.Slow(t, "builds another module")
	for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "-run", "JoinOutcomes|GlueLines", "."}} {
		testenv.Go(t, filepath.Join("..", "examples", "ownexec"), args...)
	}
}
