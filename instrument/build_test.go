package instrument

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/execspec/execspec/internal/testenv"
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

// TestKeptBuild: with Config.Cache a build is kept by the content of its
// inputs: the same inputs give the same build, reused without rewriting
// (same paths, so go's build cache holds its compiled form); a changed
// source gives a new one.
func TestKeptBuild(t *testing.T) {
	testenv.Slow(t, "loads a module with the go command (seconds)")
	root := sourceRoot(t)
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":       "module kept\n\ngo 1.25\n",
		"kept.go":      "package kept\n\nfunc Send(ch chan int) { ch <- 1 }\n",
		"kept_test.go": "package kept\n\nimport \"testing\"\n\nfunc TestSend(t *testing.T) {\n\tch := make(chan int, 1)\n\tSend(ch)\n}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := t.TempDir()
	build := func() *Build {
		t.Helper()
		b, err := Instrument(Config{Dir: dir, Tests: []string{"."}, Root: root, Out: t.TempDir(), Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := build()
	again := build()
	if first.Cached || !again.Cached || again.Overlay != first.Overlay || again.Counts[RuleSend] != 1 {
		t.Fatalf("first %+v\nagain %+v", first, again)
	}
	if err := os.WriteFile(filepath.Join(dir, "kept.go"), []byte("package kept\n\nfunc Send(ch chan int) { ch <- 2 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := build()
	if changed.Cached || changed.Overlay == first.Overlay {
		t.Fatalf("a changed source reused the build: %+v", changed)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 2 {
		t.Fatalf("%d kept builds, want 2", len(ents))
	}
}
