package instrument

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/internal/testenv"
)

// TestBehaviour builds each program of testdata/rules twice, as written
// and rewritten, in a module of its own, and checks that the rewritten
// program returns what the original returns: run freely (the runtime then
// does what Go does), and under control with random and PCT schedules.
func TestBehaviour(t *testing.T) {
	testenv.Slow(t, "builds a module (about 10 s)")
	dir := testModule(t, "behave")
	write := func(name string, b []byte) { writeFile(t, filepath.Join(dir, name), b) }
	files, _ := filepath.Glob("testdata/rules/*.go")
	var imports, cases strings.Builder
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(path), ".go")
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := rewriteFile(t, path, true)
		write(filepath.Join("orig", name, name+".go"), src)
		write(filepath.Join("inst", name, name+".go"), out)
		fmt.Fprintf(&imports, "\torig%[1]s \"behave/orig/%[1]s\"\n\tinst%[1]s \"behave/inst/%[1]s\"\n", name)
		fmt.Fprintf(&cases, "\t{%q, orig%[2]s.Program, inst%[2]s.Program},\n", name, name)
	}
	write("behave_test.go", fmt.Appendf(nil, `package behave

import (
	"testing"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control"
%s)

var programs = []struct {
	name       string
	orig, inst func() string
}{
%s}

func TestSame(t *testing.T) {
	for _, p := range programs {
		want := p.orig()
		if got := p.inst(); got != want {
			t.Errorf("%%s, run freely: %%q, want %%q", p.name, got, want)
		}
		for seed := range uint64(20) {
			for _, s := range []control.Strategy{control.Random(seed), control.NewPCT(2, 50, seed)} {
				var got string
				_, err := rt.Run(t, rt.Config{Strategy: s}, func(*testing.T) { got = p.inst() })
				if err != nil || got != want {
					t.Fatalf("%%s under control (seed %%d, %%T): %%q, %%v; want %%q", p.name, seed, s, got, err, want)
				}
			}
		}
	}
}
`, imports.String(), cases.String()))
	testenv.Go(t, dir, "test", "-count=1", "-mod=mod", "./")
}

// testModule makes a module named name in a temporary directory that
// requires this module's source (skipped without it) and returns its
// directory.
func testModule(t *testing.T, name string) string {
	t.Helper()
	root := sourceRoot(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), fmt.Appendf(nil, "module %s\n\ngo 1.25\n\nrequire github.com/execspec/execspec v0.0.0\n\nreplace github.com/execspec/execspec => %s\n", name, root))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "go.sum"), sum)
	return dir
}

func writeFile(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sourceRoot returns the directory of this module's source (SourceRoot)
// and skips t without it (fails it in CI).
func sourceRoot(t *testing.T) string {
	t.Helper()
	root := SourceRoot()
	if root == "" {
		testenv.SkipOutsideCI(t, "the module's source is not at hand")
	}
	return root
}
