package instrument

import (
	"go/ast"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/internal/testenv"
)

const pkgInitSource = "testdata/pkginit/pkginit.go"

// rewritePkgInit rewrites testdata/pkginit/pkginit.go with every rule,
// the package-init rule included, and returns the file and the file the
// rule adds.
func rewritePkgInit(t *testing.T, sourcePos bool) (file, added []byte) {
	t.Helper()
	f, info, pkg := checkFile(t, pkgInitSource, nil, "behave/pkginit")
	pi, err := PreparePkgInit(testFset, pkg, info, []*ast.File{f})
	if err != nil || pi == nil || !pi.Touches(0) {
		t.Fatalf("PreparePkgInit: %v, %v", pi, err)
	}
	(&Rewriter{Info: info}).File(testFset, f)
	out, err := Format(testFset, f, sourcePos)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := pi.Tail(0)
	if err != nil {
		t.Fatal(err)
	}
	return append(out, tail...), pi.Source()
}

// TestPkgInitGolden compares the package-init rule's output with
// testdata/pkginit/*.golden (go test -run PkgInitGolden -rewrite
// regenerates them).
func TestPkgInitGolden(t *testing.T) {
	file, added := rewritePkgInit(t, false)
	for name, got := range map[string][]byte{"pkginit.golden": file, PkgInitFile + ".golden": added} {
		compareGolden(t, filepath.Join("testdata/pkginit", name), got, "PkgInitGolden")
	}
}

// TestPkgInitBehaviour builds the rewritten package in a module and
// checks, in a test binary: the program's own initialisation gives what
// the original gives; each controlled run starts with the package
// initialised again, once, in the same order (a variable that an init
// function appends to is not appended to twice), with a goroutine of its
// own that answers on a channel made in the run (a goroutine outside the
// bubble doing so is a fatal error of the Go runtime) and that does not
// keep the run from ending; Do initialises it afresh too; after the
// session the program's values are back, its own goroutine answering.
func TestPkgInitBehaviour(t *testing.T) {
	testenv.Slow(t, "builds a module (about 10 s)")
	dir := testModule(t, "behave")
	write := func(name string, b []byte) { writeFile(t, filepath.Join(dir, name), b) }
	file, added := rewritePkgInit(t, true)
	src, err := os.ReadFile(pkgInitSource)
	if err != nil {
		t.Fatal(err)
	}
	write("orig/pkginit/pkginit.go", src)
	write("pkginit/pkginit.go", file)
	write("pkginit/"+PkgInitFile, added)
	write("behave_test.go", []byte(`package behave

import (
	"strings"
	"testing"

	orig "behave/orig/pkginit"
	"behave/pkginit"

	"github.com/execspec/execspec/instrument/harness"
)

func TestPkgInit(t *testing.T) {
	want := orig.Program()
	if got := pkginit.Program(); got != want {
		t.Fatalf("run freely: %q, want %q", got, want)
	}
	for range 2 { // each session initialises the package again, in its own bubble
		s, err := harness.NewSession(t, harness.Options{Runs: 1})
		if err != nil {
			t.Fatal(err)
		}
		var inDo string
		if err := s.Do(func() { inDo = pkginit.Program() }); err != nil {
			t.Fatal(err)
		}
		if inDo != want {
			t.Errorf("in Do: %q, want %q", inDo, want)
		}
		for i := 1; i <= 3; i++ {
			var got int
			var inRun string
			if _, err := s.Run(func() { inRun, got = pkginit.Program(), pkginit.Ask() }); err != nil {
				t.Fatal(err)
			}
			if inRun != want || got != 1 {
				t.Errorf("run %d: %q, the run's goroutine answered %d; want %q, 1", i, inRun, got, want)
			}
		}
		if err := s.Close(); err == nil || !strings.Contains(err.Error(), "blocked") {
			t.Errorf("Close: %v; want word of the goroutine that Do's initialisation left", err)
		}
		if got := pkginit.Program(); got != want {
			t.Errorf("after the session: %q, want %q", got, want)
		}
	}
	if got := pkginit.Ask(); got != 1 {
		t.Errorf("the program's own goroutine answered %d, want 1", got)
	}
}
`))
	testenv.Go(t, dir, "test", "-count=1", "-mod=mod", "./")
}

// A variable the toolchain sets (//go:embed) keeps its value in the
// runs: the package's initialisation does not zero it.
func TestPkgInitKeepsEmbedded(t *testing.T) {
	src := "package p\n\nimport _ \"embed\"\n\n//go:embed p.txt\nvar data string\n\nvar n = len(data)\n"
	f, info, pkg := checkFile(t, "p.go", src, "p")
	pi, err := PreparePkgInit(testFset, pkg, info, []*ast.File{f})
	if err != nil || pi == nil {
		t.Fatalf("PreparePkgInit: %v, %v", pi, err)
	}
	src2 := string(pi.Source())
	if strings.Contains(src2, "Keep(&data)") || !strings.Contains(src2, "Keep(&n)") {
		t.Fatalf("the added file:\n%s", src2)
	}
}
