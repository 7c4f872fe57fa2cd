package instrument

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRaiseGo: a copied module below go 1.18 (or without a go directive,
// or without go.mod) is raised to 1.18 so that rewritten files may call
// generic functions; a newer one is left as it is.
func TestRaiseGo(t *testing.T) {
	cases := []struct{ in, want string }{
		{"module m\n\ngo 1.13\n\nrequire x v1.0.0\n", "module m\n\ngo 1.18\n\nrequire x v1.0.0\n"},
		{"module m\ngo 1.16 // old\n", "module m\ngo 1.18\n"},
		{"module m\n", "module m\n\ngo 1.18\n"},
		{"module m\n\ngo 1.21.3\n", "module m\n\ngo 1.21.3\n"},
		{"module m\n\ngo 1.18\n", "module m\n\ngo 1.18\n"},
		{"", "module example.com/m\n\ngo 1.18\n"}, // no go.mod
	}
	for _, c := range cases {
		dir := t.TempDir()
		name := filepath.Join(dir, "go.mod")
		if c.in != "" {
			if err := os.WriteFile(name, []byte(c.in), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := raiseGo(dir, "example.com/m"); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(name); string(got) != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
