package instrument

import (
	"bytes"
	"flag"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewriteGolden = flag.Bool("rewrite", false, "rewrite the golden files of testdata/rules")

// rewriteFile type-checks one file on its own (standard library imports
// only) and rewrites it.
// One file set and one importer for every file: the source importer
// type-checks each standard package once.
var (
	testFset = token.NewFileSet()
	testImp  = importer.ForCompiler(testFset, "source", nil)
)

func rewriteFile(t *testing.T, path string, sourcePos bool) ([]byte, map[string]int) {
	t.Helper()
	fset := testFset
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
		Instances: map[*ast.Ident]types.Instance{}}
	conf := types.Config{Importer: testImp}
	if _, err := conf.Check(f.Name.Name, fset, []*ast.File{f}, info); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	w := &Rewriter{Info: info, Tests: strings.HasSuffix(path, "_test.go")}
	if !w.File(fset, f) {
		t.Fatalf("%s: nothing rewritten", path)
	}
	out, err := Format(fset, f, sourcePos)
	if err != nil {
		t.Fatal(err)
	}
	return out, w.Counts
}

// compareGolden compares got with the golden file, or writes it there
// with -rewrite (test names the test that -run takes to do so).
func compareGolden(t *testing.T, golden string, got []byte, test string) {
	t.Helper()
	if *rewriteGolden {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -run %s -rewrite):\n%s", golden, test, got)
	}
}

// TestGolden rewrites each file of testdata/rules and compares the result
// with its .golden file (go test -run Golden -rewrite regenerates them).
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/rules/*.go")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	seen := map[string]int{}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			got, counts := rewriteFile(t, path, false)
			for k, v := range counts {
				seen[k] += v
			}
			compareGolden(t, strings.TrimSuffix(path, ".go")+".golden", got, "Golden")
		})
	}
	// Every rule has a golden test.
	for _, rule := range []string{RuleGo, RuleSend, RuleRecv, RuleRecv2, RuleClose, RuleRange, RuleSelect, RuleSync, RuleAtomic, RuleGosched, RuleSleep, RuleRand, RuleMap, RuleTest} {
		if seen[rule] == 0 {
			t.Errorf("rule %s is not exercised by testdata/rules", rule)
		}
	}
}
