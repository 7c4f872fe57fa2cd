package tests

import (
	"strings"
	"testing"
)

// A test file with nothing to rewrite but its tests imports the harness
// alone: the runtime's import would be unused.
func TestOnlyWrapped(t *testing.T) {
	if !strings.HasPrefix("execspec", "exec") {
		t.Fatal("prefix")
	}
}
