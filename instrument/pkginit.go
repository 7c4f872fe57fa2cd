package instrument

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

// RulePkgInit is the package-init rule: a package's initialisation (its
// package-level variables' initialisers and its init functions) can be
// run again by the runtime, at the start of every controlled run, under
// control (instrument/rt's pkginit.go).
//
// Why: a package's initialisation runs when the program starts, outside
// any synctest bubble. What it starts there (a default pool's dispatcher
// goroutine, a purge ticker) is outside the bubble for good: uncontrolled,
// never seen blocked, and fatal to the process as soon as it touches a
// channel made in the bubble (closing it, sending on it). Run once in a
// session's bubble but outside the runs, it would be uncontrolled there
// and share the runs' locks and wait groups, which the runtime keeps
// apart for controlled and uncontrolled goroutines (a false "negative
// WaitGroup counter" in pond v2.1.6). Run at the start of each run, it
// is part of the run: a fresh program for the instrumented packages. The
// program's own initialisation still happens as Go says, so that code
// running outside the runs (another package's init, a test's setup)
// sees the package initialised; the runtime saves the values a run
// replaces and puts them back when it ends.
//
//	before                            after (same file; the // line directives name the original lines)
//	var a, b = f(x)                   var a, b = f(x)
//	                                  func _rt_pkginit0() { a, b = f(x) }
//	func init() { body }              func _rt_pkginitfn0() { body }
//	                                  func init() { _rt_pkginitfn0() }
//	(a new file of the package)       func init() { pkginit.Register("path", _rt_pkginit) }
//	                                  func _rt_pkginit(keep func(func())) {
//	                                      keep(pkginit.Keep(&a)); keep(pkginit.Keep(&b)); ...  // every package-level variable: saved, then zero
//	                                      _rt_pkginit0(); ...                       // the initialisers, in types.Info.InitOrder
//	                                      _rt_pkginitfn0(); ...                     // the init functions, in file and source order
//	                                  }
//
// Every package-level variable is set to its zero value first, as at the
// program's start, so that an init function that appends to one does
// not see the first initialisation's values; those the toolchain sets
// (//go:embed) keep theirs. What packages that are not instrumented put
// into an instrumented one at their own initialisation (a registration
// in its map) is not there in the runs: instrument them too. The initialisers run in the
// order the type checker computed for the package (the specification's:
// dependencies first, then declaration order), then the init functions
// in the order of the files as the go command presents them (sorted by
// name) and of their source. Packages register when the program
// initialises them, so the runtime re-runs them in the same order:
// every package after the packages it imports, each once.
const RulePkgInit = "pkginit"

// PkgInitFile is the name of the file the package-init rule adds to a
// package.
const PkgInitFile = "zz_execspec_pkginit.go"

// PkgInit is the package-init rule applied to one package: Prepare it
// before its files are rewritten (it renames the init functions), then
// append Tail(i) to the printed form of file i, and add Source() as the
// file PkgInitFile.
type PkgInit struct {
	path, name string
	fset       *token.FileSet
	files      []*ast.File
	inits      []pkgInitializer
	fns        [][]pkgInitFn // per file: its renamed init functions
	vars       []string      // every package-level variable, sorted
}

// pkgInitFn is an init function, renamed _rt_pkginitfn<n>.
type pkgInitFn struct {
	n   int
	pos token.Pos
}

// pkgInitializer is one entry of the package's initialisation order.
type pkgInitializer struct {
	file int
	lhs  []string
	spec *ast.ValueSpec
	val  int // index of the value in spec.Values
}

// PreparePkgInit applies the package-init rule to the files of package
// pkg (type-checked with info): nil if the package has no package-level
// variable and no init function, or is a main package.
func PreparePkgInit(fset *token.FileSet, pkg *types.Package, info *types.Info, files []*ast.File) (*PkgInit, error) {
	if pkg == nil || pkg.Name() == "main" || len(files) == 0 {
		return nil, nil
	}
	p := &PkgInit{path: pkg.Path(), name: pkg.Name(), fset: fset, files: files, fns: make([][]pkgInitFn, len(files))}
	type site struct {
		file int
		spec *ast.ValueSpec
		idx  int
	}
	sites := map[types.Object]site{}
	linked := map[string]bool{} // set by the toolchain (//go:embed), not by an initialiser: kept as they are
	n := 0
	for i, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, s := range d.Specs {
					vs := s.(*ast.ValueSpec)
					for k, id := range vs.Names {
						if obj := info.Defs[id]; obj != nil {
							sites[obj] = site{i, vs, k}
							if embedded(d.Doc) || embedded(vs.Doc) {
								linked[id.Name] = true
							}
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == "init" {
					p.fns[i] = append(p.fns[i], pkgInitFn{n, d.Pos()})
					d.Name = ast.NewIdent("_rt_pkginitfn" + strconv.Itoa(n))
					n++
				}
			}
		}
	}
	for _, in := range info.InitOrder {
		s, ok := sites[in.Lhs[0]]
		if !ok {
			return nil, fmt.Errorf("%s: the initialiser of %s is in no file of the package", pkg.Path(), in.Lhs[0].Name())
		}
		pi := pkgInitializer{file: s.file, spec: s.spec, val: s.idx}
		if len(in.Lhs) > 1 {
			pi.val = 0
		}
		for _, v := range in.Lhs {
			pi.lhs = append(pi.lhs, v.Name())
		}
		p.inits = append(p.inits, pi)
	}
	for _, name := range pkg.Scope().Names() {
		if _, ok := pkg.Scope().Lookup(name).(*types.Var); ok && !linked[name] {
			p.vars = append(p.vars, name)
		}
	}
	sort.Strings(p.vars)
	if len(p.inits) == 0 && n == 0 && len(p.vars) == 0 {
		return nil, nil
	}
	return p, nil
}

// Touches reports whether file i gets a tail (it must then be written
// even if no other rule changed it).
func (p *PkgInit) Touches(i int) bool {
	if len(p.fns[i]) > 0 {
		return true
	}
	for _, in := range p.inits {
		if in.file == i {
			return true
		}
	}
	return false
}

// Tail is the text to append to the printed form of file i, after the
// other rules rewrote it: a function per initialiser of the file (its
// expression as rewritten) and an init function per renamed one.
func (p *PkgInit) Tail(i int) ([]byte, error) {
	var b bytes.Buffer
	cfg := printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}
	for k, in := range p.inits {
		if in.file != i {
			continue
		}
		pos := p.fset.Position(in.spec.Pos())
		fmt.Fprintf(&b, "\nfunc _rt_pkginit%d() {\n//line %s:%d\n\t", k, pos.Filename, pos.Line)
		for j, name := range in.lhs {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(name)
		}
		b.WriteString(" = ")
		if err := cfg.Fprint(&b, p.fset, in.spec.Values[in.val]); err != nil {
			return nil, err
		}
		b.WriteString("\n}\n")
	}
	for _, fn := range p.fns[i] {
		pos := p.fset.Position(fn.pos)
		fmt.Fprintf(&b, "\n//line %s:%d\nfunc init() { _rt_pkginitfn%d() }\n", pos.Filename, pos.Line, fn.n)
	}
	return b.Bytes(), nil
}

// Source is the file the rule adds to the package: its registration
// with the runtime and the function that runs its initialisation again.
func (p *PkgInit) Source() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by execspec's rewriter (package-init rule). DO NOT EDIT.\n\npackage %s\n\nimport %s %q\n\n", p.name, InitName, InitPath)
	fmt.Fprintf(&b, "func init() { %s.Register(%q, _rt_pkginit) }\n\n", InitName, p.path)
	b.WriteString("func _rt_pkginit(keep func(func())) {\n")
	for _, v := range p.vars {
		fmt.Fprintf(&b, "\tkeep(%s.Keep(&%s))\n", InitName, v)
	}
	for k := range p.inits {
		fmt.Fprintf(&b, "\t_rt_pkginit%d()\n", k)
	}
	for _, fns := range p.fns {
		for _, fn := range fns {
			fmt.Fprintf(&b, "\t_rt_pkginitfn%d()\n", fn.n)
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// embedded reports whether a doc comment holds a //go:embed directive.
func embedded(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if strings.HasPrefix(c.Text, "//go:embed") {
			return true
		}
	}
	return false
}
