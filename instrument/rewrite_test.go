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
	f, info, _ := checkFile(t, path, nil, "")
	fset := testFset
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

// checkFile parses one file (path, or src named path) and type-checks it
// on its own as the package pkgPath (its package name if ""), standard
// library imports only.
func checkFile(t *testing.T, path string, src any, pkgPath string) (*ast.File, *types.Info, *types.Package) {
	t.Helper()
	f, err := parser.ParseFile(testFset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if pkgPath == "" {
		pkgPath = f.Name.Name
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
		Instances: map[*ast.Ident]types.Instance{}}
	pkg, err := (&types.Config{Importer: testImp}).Check(pkgPath, testFset, []*ast.File{f}, info)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f, info, pkg
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
	for _, rule := range []string{RuleGo, RuleSend, RuleRecv, RuleRecv2, RuleClose, RuleRange, RuleSelect, RuleSync, RuleAtomic, RuleGosched, RuleGOMAXPROCS, RuleNumGoroutine, RuleGoschedLoop, RuleSpinCAS, RuleSleep, RuleTestTimer, RuleRand, RuleMap, RuleTest} {
		if seen[rule] == 0 {
			t.Errorf("rule %s is not exercised by testdata/rules", rule)
		}
	}
}
