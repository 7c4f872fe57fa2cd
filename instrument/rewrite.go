package instrument

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
)

// RTPath is the import path of the runtime that rewritten code calls, and
// RTName the name it is imported as (chosen not to collide with the
// program's names); StdPath and StdName are those of the runtime's
// replacements of sync's types and of map ranges (the sync and maprange
// rules), HarnessPath and HarnessName those of the test harness that
// the test rule's TestXxx functions call, InitPath and InitName those of
// the registry of packages' initialisation (the package-init rule).
const (
	RTPath      = "github.com/execspec/execspec/instrument/rt"
	RTName      = "execspecrt"
	StdPath     = "github.com/execspec/execspec/instrument/rt/rtstd"
	StdName     = "execspecstd"
	HarnessPath = "github.com/execspec/execspec/instrument/harness"
	HarnessName = "execspecharness"
	InitPath    = "github.com/execspec/execspec/instrument/rt/pkginit"
	InitName    = "execspecinit"
)

// The rewrite rules. Each rewritten construct keeps Go's evaluation order;
// the generated names start with _rt_ and a number unique in the file.
//
//	rule       before                              after
//	go         go f(x, y)                          { _rt_f, _rt_a := f, x, ...; rt.Go(func() { _rt_f(_rt_a, ...) }) }
//	           go func() {...}()                   rt.Go(func() {...})
//	send       ch <- v                             rt.To(ch).Send(v)   (the element type comes from ch alone)
//	recv       <-ch                                rt.Recv(ch)
//	recv2      v, ok := <-ch (= and var too)       v, ok := rt.Recv2(ch)
//	close      close(ch)                           rt.Close(ch)
//	range      for v := range ch { body }          for _rt_ch := ch; ; { v, _rt_ok := rt.Recv2(_rt_ch); if !_rt_ok { break }; body }
//	maprange   for k, v := range m { body }        for k, v, _rt_it := rtstd.MapOrdered(m).Start(); _rt_it.Next(&k, &v); { body }
//	           (keys of ordered types; rtstd.MapAny for arrays and structs of them: the keys' order, so that replays take the same path)
//	select     select { case v := <-a: A           { _rt_c0 := rt.RecvCase(a); _rt_c1 := rt.To(b).Case(x)
//	           case b <- x: B; default: D }          switch rt.Select(true, _rt_c0, _rt_c1) {
//	                                                 case 0: v := _rt_c0.V; A  case 1: B  default: D } }
//	                                               (a label on the select moves to the switch: break means the same)
//	sync       sync.Mutex, RWMutex, WaitGroup,     rtstd.Mutex, ... (rtstd.NewCond)
//	           Once, Cond, NewCond
//	atomic     atomic.AddInt32(p, 1), x.Load()     rt.Then(rt.Yield(), atomic.AddInt32(p, 1))
//	           atomic.StoreInt32(p, 1) (statement) rt.Yield(); atomic.StoreInt32(p, 1)
//	gosched    runtime.Gosched                     rt.Gosched
//	gomaxprocs runtime.GOMAXPROCS                  rt.GOMAXPROCS (a run runs on one P; the program sees the value it had: rt/procs.go)
//	numgoroutine runtime.NumGoroutine              rt.NumGoroutine (the parked runtime goroutines that run later controlled
//	                                               goroutines are not counted, so that a leak check counts as without control: rt/gpool.go)
//	goschedloop for i := 0; i < n; i++ {           for i := 0; i < n; i++ { if rt.GoschedLoop() { break } }
//	             runtime.Gosched() }               (a loop that only yields; under control it yields once: spin.go)
//	spincas    for !atomic.CompareAndSwapT(p, o, n) for !rt.Then(rt.SpinCAS(func() bool { return atomic.LoadT(p) == o }),
//	           { body }                              atomic.CompareAndSwapT(p, o, n)) { body }
//	                                               (a spin loop whose body nobody else sees; under control it waits until
//	                                               the CAS would succeed: spin.go)
//	sleep      time.Sleep, time.AfterFunc          rt.Sleep, rt.AfterFunc (the callback runs on a goroutine the scheduler adopts)
//	testtimer  time.After, NewTimer, NewTicker,    rtstd.TestAfter, rtstd.TestNewTimer, ... (in the _test.go files of a package
//	           Tick, AfterFunc, Sleep;              under test only: the test's own timers, never fired early; rt/rtstd/testtimers.go)
//	           context.WithTimeout, WithDeadline
//	           (and their Cause forms)
//	rand       rand.Intn(n) (math/rand)            rtstd.Rand().Intn(n)   (a source of the run: replays draw the same numbers)
//	test       func TestX(t *testing.T) { body }   func TestX(t *testing.T) { harness.Test(t, func(t *testing.T) { body }) }
//	                                               (not with a //execspec:nocontrol line in its doc comment)
//	pkginit    var v = e; func init() { body }     also func _rt_pkginit0() { v = e }; func _rt_pkginitfn0() { body }; func init() { _rt_pkginitfn0() },
//	                                               and a file that registers them with pkginit.Register: each controlled run starts
//	                                               with the package's initialisation again (pkginit.go; packages instrumented
//	                                               wholesale only, not those under test)
//
// runtime.Goexit needs no rule: the runtime sees the goroutine's deferred
// calls run. Calls in defer and go statements are not wrapped with a
// yield (that would move the yield to the defer statement).
const (
	RuleGo           = "go"
	RuleSend         = "send"
	RuleRecv         = "recv"
	RuleRecv2        = "recv2"
	RuleClose        = "close"
	RuleRange        = "range"
	RuleSelect       = "select"
	RuleSync         = "sync"
	RuleAtomic       = "atomic"
	RuleGosched      = "gosched"
	RuleGOMAXPROCS   = "gomaxprocs"
	RuleNumGoroutine = "numgoroutine"
	RuleGoschedLoop  = "goschedloop"
	RuleSpinCAS      = "spincas"
	RuleSleep        = "sleep"
	RuleTestTimer    = "testtimer"
	RuleTest         = "test"
	RuleRand         = "rand"
	RuleMap          = "maprange"
)

// randFuncs are the top-level functions of math/rand that are also
// methods of *rand.Rand.
var randFuncs = map[string]bool{"Int": true, "Intn": true, "Int31": true, "Int31n": true, "Int63": true, "Int63n": true,
	"Uint32": true, "Uint64": true, "Float32": true, "Float64": true, "Perm": true, "Shuffle": true, "ExpFloat64": true, "NormFloat64": true}

// NoControl, as a line of a test function's doc comment, keeps the
// function from being wrapped (its body is still rewritten): for a test
// that drives the runtime itself.
const NoControl = "//execspec:nocontrol"

// Rewriter rewrites the files of one type-checked package.
type Rewriter struct {
	Info *types.Info
	// Tests wraps each TestXxx(t *testing.T) function to run under
	// control and makes the timers the file creates the test's own (the
	// testtimer rule), for the _test.go files of a package under test.
	Tests bool
	// Counts counts the rewrites by rule.
	Counts map[string]int

	n      int
	skip   map[ast.Node]bool
	notes  map[ast.Node]any
	built  map[*ast.BlockStmt]bool // blocks made from a select
	shared map[*types.Var]bool     // local variables another goroutine may reach (sharedVars)
}

// goNote is what pre learned about a go statement.
type goNote struct {
	evalFun bool   // the function value must be evaluated now
	inline  []bool // argument i is a constant or nil: written into the closure
}

// File rewrites f in place and reports whether it changed. The imports of
// the runtime and of the harness are added when needed; imports left unused are removed.
func (w *Rewriter) File(fset *token.FileSet, f *ast.File) bool {
	if w.Counts == nil {
		w.Counts = map[string]int{}
	}
	w.skip = map[ast.Node]bool{}
	w.notes = map[ast.Node]any{}
	w.built = map[*ast.BlockStmt]bool{}
	w.shared = w.sharedVars(f)
	before := total(w.Counts)
	astutil.Apply(f, w.pre, w.post)
	if total(w.Counts) == before {
		return false
	}
	if usesName(f, RTName) {
		astutil.AddNamedImport(fset, f, RTName, RTPath)
	}
	if usesName(f, StdName) {
		astutil.AddNamedImport(fset, f, StdName, StdPath)
	}
	if usesName(f, HarnessName) {
		astutil.AddNamedImport(fset, f, HarnessName, HarnessPath)
	}
	for _, imp := range slices.Clone(f.Imports) {
		path, _ := strconv.Unquote(imp.Path.Value)
		if imp.Name != nil && (imp.Name.Name == "_" || imp.Name.Name == ".") {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if pn := w.Info.PkgNameOf(imp); pn != nil {
			name = pn.Name()
		} else if imp.Name != nil {
			name = imp.Name.Name
		}
		if path == RTPath || path == StdPath || path == HarnessPath {
			continue
		}
		if !usesName(f, name) {
			if imp.Name != nil {
				astutil.DeleteNamedImport(fset, f, imp.Name.Name, path)
			} else {
				astutil.DeleteImport(fset, f, path)
			}
		}
	}
	return true
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// usesName reports whether f refers to the package name (a selector
// X.Sel with X that identifier).
func usesName(f *ast.File, name string) bool {
	used := false
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
				used = true
			}
		}
		return !used
	})
	return used
}

func (w *Rewriter) name(kind string) string {
	w.n++
	return fmt.Sprintf("_rt_%s%d", kind, w.n)
}

func rtSel(name string) *ast.SelectorExpr {
	return &ast.SelectorExpr{X: ast.NewIdent(RTName), Sel: ast.NewIdent(name)}
}

func stdSel(name string) *ast.SelectorExpr {
	return &ast.SelectorExpr{X: ast.NewIdent(StdName), Sel: ast.NewIdent(name)}
}

func rtCall(name string, args ...ast.Expr) *ast.CallExpr {
	return &ast.CallExpr{Fun: rtSel(name), Args: args}
}

// pkgOf returns the import path of the package that id names, or "".
func (w *Rewriter) pkgOf(e ast.Expr) string {
	id, ok := e.(*ast.Ident)
	if !ok {
		return ""
	}
	if pn, ok := w.Info.Uses[id].(*types.PkgName); ok {
		return pn.Imported().Path()
	}
	return ""
}

func isRecv(e ast.Expr) (*ast.UnaryExpr, bool) {
	u, ok := ast.Unparen(e).(*ast.UnaryExpr)
	return u, ok && u.Op == token.ARROW
}

func (w *Rewriter) isChan(e ast.Expr) bool {
	t := w.Info.TypeOf(e)
	if t == nil {
		return false
	}
	_, ok := t.Underlying().(*types.Chan)
	return ok
}

// atomicCall reports whether call is a function of sync/atomic or a
// method of one of its types, and how many results it has.
func (w *Rewriter) atomicCall(call *ast.CallExpr) (bool, int) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false, 0
	}
	results := func() int {
		if sig, ok := w.Info.TypeOf(call.Fun).(*types.Signature); ok {
			return sig.Results().Len()
		}
		return -1
	}
	if w.pkgOf(sel.X) == "sync/atomic" {
		return true, results()
	}
	if s := w.Info.Selections[sel]; s != nil && s.Kind() == types.MethodVal {
		t := s.Recv()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := t.(*types.Named); ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "sync/atomic" {
			return true, results()
		}
	}
	return false, 0
}

// testTimers are the functions of package time that make a timer, which
// the testtimer rule routes through the runtime in a test's own code
// (rtstd.TestAfter, ...).
var testTimers = map[string]bool{"After": true, "NewTimer": true, "NewTicker": true, "Tick": true, "AfterFunc": true, "Sleep": true}

// testDeadlines are the functions of package context that make a timer
// (rtstd.TestWithTimeout, ...).
var testDeadlines = map[string]bool{"WithTimeout": true, "WithTimeoutCause": true, "WithDeadline": true, "WithDeadlineCause": true}

var syncTypes = map[string]bool{"Mutex": true, "RWMutex": true, "WaitGroup": true, "Once": true, "Cond": true, "NewCond": true}

func (w *Rewriter) pre(c *astutil.Cursor) bool {
	switch n := c.Node().(type) {
	case *ast.SelectStmt:
		for _, cl := range n.Body.List {
			switch comm := cl.(*ast.CommClause).Comm.(type) {
			case *ast.SendStmt:
				w.skip[comm] = true
			case *ast.ExprStmt:
				if u, ok := isRecv(comm.X); ok {
					w.skip[u] = true
				}
			case *ast.AssignStmt:
				if u, ok := isRecv(comm.Rhs[0]); ok {
					w.skip[u] = true
				}
			}
		}
	case *ast.AssignStmt:
		if len(n.Lhs) == 2 && len(n.Rhs) == 1 {
			if u, ok := isRecv(n.Rhs[0]); ok && !w.skip[u] {
				w.skip[u] = true
				w.notes[n] = u
			}
		}
	case *ast.ValueSpec:
		if len(n.Names) == 2 && len(n.Values) == 1 {
			if u, ok := isRecv(n.Values[0]); ok {
				w.skip[u] = true
				w.notes[n] = u
			}
		}
	case *ast.RangeStmt:
		if w.isChan(n.X) {
			w.notes[n] = true
		} else if f := w.mapOrder(n.X); f != "" {
			w.notes[n] = f
		}
	case *ast.DeferStmt:
		w.skip[n.Call] = true
	case *ast.GoStmt:
		w.skip[n.Call] = true
		w.notes[n] = w.noteGo(n.Call)
	case *ast.CallExpr:
		if ok, res := w.atomicCall(n); ok && !w.skip[n] {
			w.notes[n] = res
		}
		if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok {
			if b, ok := w.Info.Uses[id].(*types.Builtin); ok && b.Name() == "close" {
				w.notes[id] = "close"
			}
		}
	case *ast.ExprStmt:
		if call, ok := n.X.(*ast.CallExpr); ok {
			if ok, res := w.atomicCall(call); ok && res == 0 {
				w.notes[n] = "atomic"
			}
		}
	case *ast.SelectorExpr:
		switch w.pkgOf(n.X) {
		case "sync":
			if syncTypes[n.Sel.Name] {
				w.notes[n] = RuleSync
			}
		case "runtime":
			if n.Sel.Name == "Gosched" && !w.skip[n] {
				w.notes[n] = RuleGosched
			} else if n.Sel.Name == "GOMAXPROCS" {
				w.notes[n] = RuleGOMAXPROCS
			} else if n.Sel.Name == "NumGoroutine" {
				w.notes[n] = RuleNumGoroutine
			}
		case "time":
			if w.Tests && testTimers[n.Sel.Name] {
				w.notes[n] = RuleTestTimer
			} else if n.Sel.Name == "Sleep" || n.Sel.Name == "AfterFunc" {
				w.notes[n] = RuleSleep
			}
		case "context":
			if w.Tests && testDeadlines[n.Sel.Name] {
				w.notes[n] = RuleTestTimer
			}
		case "math/rand":
			if randFuncs[n.Sel.Name] {
				w.notes[n] = RuleRand
			}
		}
	case *ast.FuncDecl:
		if w.Tests && w.isTest(n) {
			w.notes[n] = RuleTest
		}
	case *ast.ForStmt:
		if sel := w.goschedLoop(n); sel != nil {
			w.skip[sel] = true
			w.notes[n] = RuleGoschedLoop
		} else if note := w.spinCAS(n); note != nil {
			w.skip[note.cas] = true
			w.notes[n] = note
		}
	}
	return true
}

func (w *Rewriter) noteGo(call *ast.CallExpr) goNote {
	var g goNote
	fun := ast.Unparen(call.Fun)
	switch f := fun.(type) {
	case *ast.Ident:
		_, isVar := w.Info.Uses[f].(*types.Var)
		g.evalFun = isVar
	case *ast.SelectorExpr:
		if w.pkgOf(f.X) == "" {
			g.evalFun = true // a method value or a field: evaluated now
		}
	case *ast.IndexExpr, *ast.IndexListExpr:
		g.evalFun = false // an instantiated generic function
	case *ast.FuncLit:
		g.evalFun = false
	default:
		g.evalFun = true
	}
	if id, ok := fun.(*ast.Ident); ok {
		if _, ok := w.Info.Uses[id].(*types.Builtin); ok {
			g.evalFun = false
		}
	}
	for _, a := range call.Args {
		tv := w.Info.Types[a]
		g.inline = append(g.inline, tv.Value != nil || tv.IsNil())
	}
	return g
}

func (w *Rewriter) isTest(fd *ast.FuncDecl) bool {
	if fd.Recv != nil || fd.Body == nil || fd.Type.TypeParams != nil || !strings.HasPrefix(fd.Name.Name, "Test") {
		return false
	}
	if fd.Doc != nil {
		for _, c := range fd.Doc.List {
			if c.Text == NoControl {
				return false
			}
		}
	}
	if rest := fd.Name.Name[4:]; rest != "" && rest[0] >= 'a' && rest[0] <= 'z' {
		return false
	}
	obj, ok := w.Info.Defs[fd.Name].(*types.Func)
	if !ok {
		return false
	}
	sig := obj.Type().(*types.Signature)
	if sig.Params().Len() != 1 || sig.Results().Len() != 0 {
		return false
	}
	p, ok := sig.Params().At(0).Type().(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := p.Elem().(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "testing" && n.Obj().Name() == "T"
}

func (w *Rewriter) post(c *astutil.Cursor) bool {
	switch n := c.Node().(type) {
	case *ast.SendStmt:
		if !w.skip[n] {
			c.Replace(&ast.ExprStmt{X: &ast.CallExpr{Fun: &ast.SelectorExpr{X: rtCall("To", n.Chan), Sel: ast.NewIdent("Send")}, Args: []ast.Expr{n.Value}}})
			w.Counts[RuleSend]++
		}
	case *ast.UnaryExpr:
		if n.Op == token.ARROW && !w.skip[n] {
			c.Replace(rtCall("Recv", n.X))
			w.Counts[RuleRecv]++
		}
	case *ast.AssignStmt:
		if u, ok := w.notes[n].(*ast.UnaryExpr); ok {
			n.Rhs[0] = rtCall("Recv2", u.X)
			w.Counts[RuleRecv2]++
		}
	case *ast.ValueSpec:
		if u, ok := w.notes[n].(*ast.UnaryExpr); ok {
			n.Values[0] = rtCall("Recv2", u.X)
			w.Counts[RuleRecv2]++
		}
	case *ast.Ident:
		if w.notes[n] == "close" {
			c.Replace(rtSel("Close"))
			w.Counts[RuleClose]++
		}
	case *ast.SelectorExpr:
		switch rule := w.notes[n]; rule {
		case RuleSync:
			c.Replace(stdSel(n.Sel.Name))
			w.Counts[RuleSync]++
		case RuleGosched, RuleGOMAXPROCS, RuleNumGoroutine, RuleSleep:
			c.Replace(rtSel(n.Sel.Name))
			w.Counts[rule.(string)]++
		case RuleTestTimer:
			c.Replace(stdSel("Test" + n.Sel.Name))
			w.Counts[RuleTestTimer]++
		case RuleRand:
			c.Replace(&ast.SelectorExpr{X: &ast.CallExpr{Fun: stdSel("Rand")}, Sel: ast.NewIdent(n.Sel.Name)})
			w.Counts[RuleRand]++
		}
	case *ast.CallExpr:
		if res, ok := w.notes[n].(int); ok && res == 1 {
			c.Replace(rtCall("Then", rtCall("Yield"), n))
			w.Counts[RuleAtomic]++
		}
	case *ast.ExprStmt:
		if w.notes[n] == "atomic" && c.Index() >= 0 {
			c.InsertBefore(&ast.ExprStmt{X: rtCall("Yield")})
			w.Counts[RuleAtomic]++
		}
	case *ast.RangeStmt:
		if w.notes[n] == true {
			c.Replace(w.rangeChan(n))
			w.Counts[RuleRange]++
		} else if f, ok := w.notes[n].(string); ok {
			c.Replace(w.rangeMap(n, f))
			w.Counts[RuleMap]++
		}
	case *ast.GoStmt:
		c.Replace(w.goStmt(n, w.notes[n].(goNote)))
		w.Counts[RuleGo]++
	case *ast.SelectStmt:
		b := w.selectStmt(n)
		w.built[b] = true
		c.Replace(b)
		w.Counts[RuleSelect]++
	case *ast.LabeledStmt:
		if b, ok := n.Stmt.(*ast.BlockStmt); ok && w.built[b] {
			// L: select → { cases...; L: switch }: break L means the same.
			last := len(b.List) - 1
			b.List[last] = &ast.LabeledStmt{Label: n.Label, Stmt: b.List[last]}
			c.Replace(b)
		}
	case *ast.FuncDecl:
		if w.notes[n] == RuleTest {
			w.wrapTest(n)
			w.Counts[RuleTest]++
		}
	case *ast.ForStmt:
		if note, ok := w.notes[n].(*spinNote); ok {
			n.Cond = spinCond(note)
			w.Counts[RuleSpinCAS]++
		}
		if w.notes[n] == RuleGoschedLoop {
			n.Body.List = []ast.Stmt{&ast.IfStmt{If: n.Body.List[0].Pos(), Cond: rtCall("GoschedLoop"),
				Body: &ast.BlockStmt{List: []ast.Stmt{&ast.BranchStmt{Tok: token.BREAK}}}}}
			w.Counts[RuleGoschedLoop]++
		}
	}
	return true
}

func (w *Rewriter) rangeChan(n *ast.RangeStmt) *ast.ForStmt {
	ch := ast.NewIdent(w.name("ch"))
	ok := ast.NewIdent(w.name("ok"))
	var first []ast.Stmt
	var lhs ast.Expr = ast.NewIdent("_")
	var assign ast.Stmt
	if n.Key != nil {
		if n.Tok == token.DEFINE {
			lhs = n.Key
		} else {
			v := ast.NewIdent(w.name("v"))
			lhs = v
			assign = &ast.AssignStmt{Lhs: []ast.Expr{n.Key}, Tok: token.ASSIGN, Rhs: []ast.Expr{ast.NewIdent(v.Name)}}
		}
	}
	first = append(first,
		&ast.AssignStmt{Lhs: []ast.Expr{lhs, ok}, Tok: token.DEFINE, Rhs: []ast.Expr{rtCall("Recv2", ast.NewIdent(ch.Name))}},
		&ast.IfStmt{Cond: &ast.UnaryExpr{Op: token.NOT, X: ast.NewIdent(ok.Name)}, Body: &ast.BlockStmt{List: []ast.Stmt{&ast.BranchStmt{Tok: token.BREAK}}}})
	if assign != nil {
		first = append(first, assign)
	}
	body := &ast.BlockStmt{Lbrace: n.Body.Lbrace, List: append(first, n.Body.List...), Rbrace: n.Body.Rbrace}
	return &ast.ForStmt{For: n.For,
		Init: &ast.AssignStmt{Lhs: []ast.Expr{ch}, Tok: token.DEFINE, Rhs: []ast.Expr{n.X}},
		Body: body}
}

// mapOrder returns rtstd's function that ranges over the map e in
// the order of its keys ("MapOrdered" or "MapAny"), or "" if e is not a
// map or its keys have no order (pointers, channels, interfaces: such a
// range keeps Go's order, which replays do not reproduce).
func (w *Rewriter) mapOrder(e ast.Expr) string {
	t := w.Info.TypeOf(e)
	if t == nil {
		return ""
	}
	if _, ok := t.(*types.TypeParam); ok {
		return ""
	}
	m, ok := t.Underlying().(*types.Map)
	if !ok {
		return ""
	}
	if b, ok := m.Key().Underlying().(*types.Basic); ok && b.Info()&types.IsOrdered != 0 {
		return "MapOrdered"
	}
	if ordered(m.Key()) {
		return "MapAny"
	}
	return ""
}

// ordered reports whether values of t can be ordered field by field and
// element by element (see rtstd.MapAny).
func ordered(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&(types.IsOrdered|types.IsBoolean|types.IsComplex) != 0
	case *types.Array:
		return ordered(u.Elem())
	case *types.Struct:
		for i := range u.NumFields() {
			if !ordered(u.Field(i).Type()) {
				return false
			}
		}
		return true
	}
	return false
}

// rangeMap rewrites a range over a map into a loop over rt's iterator in
// key order. The loop's variables are declared by the loop's init
// statement, as the range's are, so that they are shared or per iteration
// exactly as the file's language version says.
func (w *Rewriter) rangeMap(n *ast.RangeStmt, f string) *ast.ForStmt {
	it := w.name("it")
	blank := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return e == nil || ok && id.Name == "_"
	}
	addr := func(e ast.Expr) ast.Expr {
		if blank(e) {
			return ast.NewIdent("nil")
		}
		return &ast.UnaryExpr{Op: token.AND, X: ast.NewIdent(e.(*ast.Ident).Name)}
	}
	orBlank := func(e ast.Expr) ast.Expr {
		if blank(e) {
			return ast.NewIdent("_")
		}
		return e
	}
	order := &ast.CallExpr{Fun: stdSel(f), Args: []ast.Expr{n.X}}
	start := &ast.CallExpr{Fun: &ast.SelectorExpr{X: order, Sel: ast.NewIdent("Start")}}
	next := func(k, v ast.Expr) ast.Expr {
		return &ast.CallExpr{Fun: &ast.SelectorExpr{X: ast.NewIdent(it), Sel: ast.NewIdent("Next")}, Args: []ast.Expr{k, v}}
	}
	loop := &ast.ForStmt{For: n.For, Body: n.Body}
	if n.Tok == token.DEFINE {
		loop.Init = &ast.AssignStmt{Lhs: []ast.Expr{orBlank(n.Key), orBlank(n.Value), ast.NewIdent(it)}, Tok: token.DEFINE, Rhs: []ast.Expr{start}}
		loop.Cond = next(addr(n.Key), addr(n.Value))
		return loop
	}
	loop.Init = &ast.AssignStmt{Lhs: []ast.Expr{ast.NewIdent("_"), ast.NewIdent("_"), ast.NewIdent(it)}, Tok: token.DEFINE, Rhs: []ast.Expr{start}}
	loop.Cond = next(ast.NewIdent("nil"), ast.NewIdent("nil"))
	var lhs, rhs []ast.Expr
	for _, x := range []struct {
		e      ast.Expr
		method string
	}{{n.Key, "Key"}, {n.Value, "Value"}} {
		if !blank(x.e) {
			lhs = append(lhs, x.e)
			rhs = append(rhs, &ast.CallExpr{Fun: &ast.SelectorExpr{X: ast.NewIdent(it), Sel: ast.NewIdent(x.method)}})
		}
	}
	if len(lhs) > 0 {
		loop.Body = &ast.BlockStmt{Lbrace: n.Body.Lbrace, List: []ast.Stmt{&ast.AssignStmt{Lhs: lhs, Tok: token.ASSIGN, Rhs: rhs}, n.Body}, Rbrace: n.Body.Rbrace}
	}
	return loop
}

func (w *Rewriter) goStmt(n *ast.GoStmt, note goNote) ast.Stmt {
	call := n.Call
	var lhs, rhs []ast.Expr
	fun := call.Fun
	if note.evalFun {
		f := w.name("f")
		lhs = append(lhs, ast.NewIdent(f))
		rhs = append(rhs, fun)
		fun = ast.NewIdent(f)
	}
	args := make([]ast.Expr, len(call.Args))
	for i, a := range call.Args {
		if i < len(note.inline) && note.inline[i] {
			args[i] = a
			continue
		}
		v := w.name("a")
		lhs = append(lhs, ast.NewIdent(v))
		rhs = append(rhs, a)
		args[i] = ast.NewIdent(v)
	}
	inner := &ast.CallExpr{Fun: fun, Args: args, Ellipsis: call.Ellipsis}
	var body ast.Expr
	if lit, ok := fun.(*ast.FuncLit); ok && len(call.Args) == 0 {
		body = lit
	} else {
		body = &ast.FuncLit{Type: &ast.FuncType{Params: &ast.FieldList{}}, Body: &ast.BlockStmt{List: []ast.Stmt{&ast.ExprStmt{X: inner}}}}
	}
	goCall := &ast.ExprStmt{X: &ast.CallExpr{Fun: &ast.SelectorExpr{X: ast.NewIdent(RTName), Sel: ast.NewIdent("Go")}, Args: []ast.Expr{body}}}
	if len(lhs) == 0 {
		return goCall
	}
	return &ast.BlockStmt{List: []ast.Stmt{
		&ast.AssignStmt{Lhs: lhs, Tok: token.DEFINE, Rhs: rhs},
		goCall,
	}}
}

func (w *Rewriter) selectStmt(n *ast.SelectStmt) *ast.BlockStmt {
	var decls []ast.Stmt
	var cases []ast.Expr
	hasDefault := false
	var clauses []ast.Stmt
	for _, s := range n.Body.List {
		cl := s.(*ast.CommClause)
		if cl.Comm == nil {
			hasDefault = true
			clauses = append(clauses, &ast.CaseClause{Case: cl.Case, Colon: cl.Colon, Body: cl.Body})
			continue
		}
		idx := len(cases)
		cv := w.name("c")
		var mk ast.Expr
		var first []ast.Stmt
		switch comm := cl.Comm.(type) {
		case *ast.SendStmt:
			mk = &ast.CallExpr{Fun: &ast.SelectorExpr{X: rtCall("To", comm.Chan), Sel: ast.NewIdent("Case")}, Args: []ast.Expr{comm.Value}}
		case *ast.ExprStmt:
			u, _ := isRecv(comm.X)
			mk = rtCall("RecvCase", u.X)
		case *ast.AssignStmt:
			u, _ := isRecv(comm.Rhs[0])
			mk = rtCall("RecvCase", u.X)
			rhs := []ast.Expr{&ast.SelectorExpr{X: ast.NewIdent(cv), Sel: ast.NewIdent("V")}}
			if len(comm.Lhs) == 2 {
				rhs = append(rhs, &ast.SelectorExpr{X: ast.NewIdent(cv), Sel: ast.NewIdent("OK")})
			}
			first = append(first, &ast.AssignStmt{Lhs: comm.Lhs, Tok: comm.Tok, Rhs: rhs})
		}
		decls = append(decls, &ast.AssignStmt{Lhs: []ast.Expr{ast.NewIdent(cv)}, Tok: token.DEFINE, Rhs: []ast.Expr{mk}})
		cases = append(cases, ast.NewIdent(cv))
		clauses = append(clauses, &ast.CaseClause{Case: cl.Case, Colon: cl.Colon,
			List: []ast.Expr{&ast.BasicLit{Kind: token.INT, Value: strconv.Itoa(idx)}},
			Body: append(first, cl.Body...)})
	}
	if !hasDefault {
		// rt.Select without a default returns one of the cases or blocks
		// for ever; the default clause is never taken, but it keeps the
		// switch a terminating statement wherever the select was one (a
		// function that ends in a select whose cases all return).
		clauses = append(clauses, &ast.CaseClause{Body: []ast.Stmt{&ast.ExprStmt{X: &ast.CallExpr{
			Fun: ast.NewIdent("panic"), Args: []ast.Expr{&ast.BasicLit{Kind: token.STRING, Value: `"execspec: rt.Select returned no case"`}}}}}})
	}
	args := append([]ast.Expr{ast.NewIdent(strconv.FormatBool(hasDefault))}, cases...)
	sw := &ast.SwitchStmt{Switch: n.Select, Tag: &ast.CallExpr{Fun: rtSel("Select"), Args: args},
		Body: &ast.BlockStmt{Lbrace: n.Body.Lbrace, List: clauses, Rbrace: n.Body.Rbrace}}
	return &ast.BlockStmt{List: append(decls, sw)}
}

func (w *Rewriter) wrapTest(fd *ast.FuncDecl) {
	param := fd.Type.Params.List[0]
	outer := "_rt_t"
	if len(param.Names) == 1 && param.Names[0].Name != "_" {
		outer = param.Names[0].Name
	}
	inner := &ast.FuncLit{
		Type: &ast.FuncType{Params: &ast.FieldList{List: []*ast.Field{{Names: param.Names, Type: param.Type}}}},
		Body: fd.Body,
	}
	fd.Type = &ast.FuncType{Func: fd.Type.Func, Params: &ast.FieldList{List: []*ast.Field{{Names: []*ast.Ident{ast.NewIdent(outer)}, Type: param.Type}}}}
	call := &ast.CallExpr{Fun: &ast.SelectorExpr{X: ast.NewIdent(HarnessName), Sel: ast.NewIdent("Test")}, Args: []ast.Expr{&ast.Ident{NamePos: fd.Body.Lbrace, Name: outer}, inner}}
	// Positions, so that the printer keeps the comments that follow in place.
	sel := call.Fun.(*ast.SelectorExpr)
	sel.X.(*ast.Ident).NamePos, sel.Sel.NamePos, call.Lparen, call.Rparen = fd.Body.Lbrace, fd.Body.Lbrace, fd.Body.Lbrace, fd.Body.Rbrace
	fd.Body = &ast.BlockStmt{Lbrace: fd.Body.Lbrace, List: []ast.Stmt{&ast.ExprStmt{X: call}}, Rbrace: fd.Body.Rbrace}
}
