package conform

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/traces"
)

// parseTrace reads a trace in the text form; lines are trimmed.
func parseTrace(t testing.TB, text string) (traces.Header, []traces.Event) {
	t.Helper()
	h, events, err := traces.ParseText(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return h, events
}

// readTrace reads the text-form trace testdata/conform/name.
func readTrace(t testing.TB, name string) (traces.Header, []traces.Event) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "conform", name))
	if err != nil {
		t.Fatal(err)
	}
	return parseTrace(t, string(data))
}

// checkEvents runs a Conformance over events and returns the report.
func checkEvents(t testing.TB, h traces.Header, events []traces.Event) *Report {
	t.Helper()
	c, err := New(h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, e := range events {
		if err := c.Step(e); err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Step returned %T, want *Error: %v", err, err)
			}
			if again := c.Step(e); again != err {
				t.Fatalf("Step after a violation returned %v, want the violation again", again)
			}
			break
		}
	}
	return c.Finish()
}
