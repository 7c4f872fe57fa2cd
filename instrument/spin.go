package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Spin loops. Two rules take out yield points that cannot change what
// another goroutine observes, so that a spin lock costs its controlled
// runs neither steps nor choices (rt.GoschedLoop, rt.SpinCAS):
//
//	rule         matches                               because
//	goschedloop  for i := 0; i < n; i++ {              between its yields the loop touches only its own
//	               runtime.Gosched() }                 variables and locals nobody else reaches: yield
//	                                                   points with nothing visible between them are one
//	spincas      for !atomic.CompareAndSwapT(p, o, n)  a failed CAS writes nothing and the body touches only
//	             { body }                              locals nobody else reaches, dead after the loop: the
//	                                                   runs in which it spins allow the interleavings of
//	                                                   those in which it waits until *p == o
//
// Nobody else reaches a local variable that no function literal captures
// while it is declared outside it and whose address is not taken
// (sharedVars). The expressions these rules accept call nothing (but
// conversions) and receive nothing, so they read no memory another
// goroutine writes.

// goschedLoop returns the runtime.Gosched of n if n is a loop that only
// yields (rule goschedloop): its body is that call alone; its condition
// (there is one) and its post statement read and write only the loop's
// own variables (declared by its init statement), constants, and local
// variables of basic types that no other goroutine can reach, and call
// nothing. Its iterations differ then only in the loop's own variables,
// which nobody else sees.
func (w *Rewriter) goschedLoop(n *ast.ForStmt) *ast.SelectorExpr {
	if len(n.Body.List) != 1 || n.Cond == nil {
		return nil
	}
	sel := w.gosched(n.Body.List[0])
	if sel == nil {
		return nil
	}
	own := map[types.Object]bool{}
	if n.Init != nil {
		as, ok := n.Init.(*ast.AssignStmt)
		if !ok || as.Tok != token.DEFINE {
			return nil
		}
		for _, l := range as.Lhs {
			if id, ok := l.(*ast.Ident); ok && w.Info.Defs[id] != nil {
				own[w.Info.Defs[id]] = true
			}
		}
	}
	ownVar := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && own[w.Info.Uses[id]]
	}
	if !w.local(n.Cond, own) {
		return nil
	}
	switch p := n.Post.(type) {
	case nil:
	case *ast.IncDecStmt:
		if !ownVar(p.X) {
			return nil
		}
	case *ast.AssignStmt:
		if p.Tok == token.DEFINE || !w.localAssign(p, ownVar, own) {
			return nil
		}
	default:
		return nil
	}
	return sel
}

// localAssign reports whether s assigns only targets (target) and from
// local expressions (local, with own).
func (w *Rewriter) localAssign(s *ast.AssignStmt, target func(ast.Expr) bool, own map[types.Object]bool) bool {
	for _, l := range s.Lhs {
		if !target(l) {
			return false
		}
	}
	for _, r := range s.Rhs {
		if !w.local(r, own) {
			return false
		}
	}
	return true
}

// gosched returns the selector of s if s is the statement
// runtime.Gosched().
func (w *Rewriter) gosched(s ast.Stmt) *ast.SelectorExpr {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return nil
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return nil
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Gosched" || w.pkgOf(sel.X) != "runtime" {
		return nil
	}
	return sel
}

// local reports whether e is an expression without calls, receives or
// addresses over constants, the variables of own and unshared local
// variables of basic types (localVar).
func (w *Rewriter) local(e ast.Expr, own map[types.Object]bool) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return true
	case *ast.ParenExpr:
		return w.local(e.X, own)
	case *ast.UnaryExpr:
		return e.Op != token.ARROW && e.Op != token.AND && w.local(e.X, own)
	case *ast.BinaryExpr:
		return w.local(e.X, own) && w.local(e.Y, own)
	case *ast.Ident:
		switch o := w.Info.Uses[e].(type) {
		case *types.Const, *types.Nil:
			return true
		case *types.Var:
			return own[o] || w.localVar(o)
		}
	}
	return false
}

// localVar reports whether v is a local variable of a basic type that no
// other goroutine can reach.
func (w *Rewriter) localVar(v *types.Var) bool {
	_, basic := v.Type().(*types.Basic)
	return basic && w.unshared(v)
}

// unshared reports whether v is a local variable (a parameter too) that
// no other goroutine can reach.
func (w *Rewriter) unshared(v *types.Var) bool {
	return !v.IsField() && v.Parent() != nil && v.Pkg() != nil && v.Parent() != v.Pkg().Scope() && !w.shared[v]
}

// spinNote is what pre learned about a spin loop (rule spincas): its
// compare-and-swap, and the load that tells whether it would succeed.
type spinNote struct {
	cas  *ast.CallExpr
	load ast.Expr // LoadT(p) or x.Load()
	old  ast.Expr
}

// casLoads maps sync/atomic's CompareAndSwap functions to their loads.
var casLoads = map[string]string{"CompareAndSwapInt32": "LoadInt32", "CompareAndSwapInt64": "LoadInt64",
	"CompareAndSwapUint32": "LoadUint32", "CompareAndSwapUint64": "LoadUint64",
	"CompareAndSwapUintptr": "LoadUintptr", "CompareAndSwapPointer": "LoadPointer"}

// casTypes are the types of sync/atomic whose CompareAndSwap compares
// the value it loads with ==.
var casTypes = map[string]bool{"Int32": true, "Int64": true, "Uint32": true, "Uint64": true, "Uintptr": true, "Bool": true, "Pointer": true}

// spinCAS returns the note of n if n is a spin loop (rule spincas):
// `for !CAS { body }`, no init or post statement, where CAS is a
// compare-and-swap of sync/atomic (a function, or a method of one of its
// integer, Bool or Pointer types) whose address (or receiver), old and
// new values are the same at every iteration (stable), and body is
// invisible: it touches only unshared locals and calls nothing but
// runtime.Gosched, and the variables it assigns are not used after the
// loop. Its failed iterations then change nothing anybody sees.
func (w *Rewriter) spinCAS(n *ast.ForStmt) *spinNote {
	if n.Init != nil || n.Post != nil || n.Cond == nil {
		return nil
	}
	not, ok := ast.Unparen(n.Cond).(*ast.UnaryExpr)
	if !ok || not.Op != token.NOT {
		return nil
	}
	call, ok := ast.Unparen(not.X).(*ast.CallExpr)
	if !ok {
		return nil
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	var note spinNote
	note.cas = call
	if w.pkgOf(sel.X) == "sync/atomic" {
		load := casLoads[sel.Sel.Name]
		if load == "" || len(call.Args) != 3 || !w.stable(call.Args[0], n.Body) {
			return nil
		}
		addr := cloneExpr(call.Args[0])
		if addr == nil {
			return nil
		}
		note.load = &ast.CallExpr{Fun: &ast.SelectorExpr{X: cloneExpr(sel.X), Sel: &ast.Ident{Name: load, NamePos: sel.Sel.NamePos}}, Args: []ast.Expr{addr}}
		note.old = call.Args[1]
	} else {
		s := w.Info.Selections[sel]
		if s == nil || s.Kind() != types.MethodVal || sel.Sel.Name != "CompareAndSwap" || len(call.Args) != 2 || !w.address(sel.X, n.Body) {
			return nil
		}
		t := s.Recv()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		nt, ok := types.Unalias(t).(*types.Named)
		if !ok || nt.Obj().Pkg() == nil || nt.Obj().Pkg().Path() != "sync/atomic" || !casTypes[nt.Obj().Name()] {
			return nil
		}
		recv := cloneExpr(sel.X)
		if recv == nil {
			return nil
		}
		note.load = &ast.CallExpr{Fun: &ast.SelectorExpr{X: recv, Sel: &ast.Ident{Name: "Load", NamePos: sel.Sel.NamePos}}}
		note.old = call.Args[0]
	}
	for _, a := range call.Args {
		if !w.stable(a, n.Body) {
			return nil
		}
	}
	assigned := map[*types.Var]bool{}
	if !w.invisible(n.Body.List, assigned) {
		return nil
	}
	// The variables the body assigns are dead after the loop: a spin
	// that waits leaves them as a first iteration that succeeds does.
	for id, o := range w.Info.Uses {
		if v, ok := o.(*types.Var); ok && assigned[v] && (id.Pos() < n.Pos() || id.Pos() >= n.End()) {
			return nil
		}
	}
	if note.old = cloneExpr(note.old); note.old == nil {
		return nil
	}
	return &note
}

// stable reports whether e has the same value at every iteration of a
// loop whose body is body, without reading memory another goroutine
// writes: a constant, an unshared local variable that body does not
// assign, the address of a local variable (or of a field of a struct a
// stable pointer points to), or a conversion of such.
func (w *Rewriter) stable(e ast.Expr, body *ast.BlockStmt) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return true
	case *ast.ParenExpr:
		return w.stable(e.X, body)
	case *ast.Ident:
		switch o := w.Info.Uses[e].(type) {
		case *types.Const, *types.Nil:
			return true
		case *types.Var:
			return w.unshared(o) && !assigns(w.Info, body, o)
		}
	case *ast.SelectorExpr:
		_, isConst := w.Info.Uses[e.Sel].(*types.Const)
		return isConst && w.pkgOf(e.X) != ""
	case *ast.UnaryExpr:
		return e.Op == token.AND && w.address(e.X, body)
	case *ast.CallExpr:
		// A conversion.
		return len(e.Args) == 1 && w.Info.Types[e.Fun].IsType() && w.stable(e.Args[0], body)
	}
	return false
}

// address reports whether the address of e is the same at every
// iteration: a local variable (whatever else reaches it), or a field of
// a struct that a stable pointer points to (or of a field of such).
func (w *Rewriter) address(e ast.Expr, body *ast.BlockStmt) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, ok := w.Info.Uses[e].(*types.Var)
		return ok && !v.IsField() && v.Parent() != nil && v.Pkg() != nil && v.Parent() != v.Pkg().Scope()
	case *ast.SelectorExpr:
		s := w.Info.Selections[e]
		if s == nil || s.Kind() != types.FieldVal || len(s.Index()) != 1 {
			return false
		}
		if _, ptr := w.Info.TypeOf(e.X).Underlying().(*types.Pointer); ptr {
			return w.stable(e.X, body)
		}
		return w.address(e.X, body)
	}
	return false
}

// assigns reports whether body assigns v (or takes its address).
func assigns(info *types.Info, body ast.Node, v *types.Var) bool {
	found := false
	is := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && (info.Uses[id] == v || info.Defs[id] == v)
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				found = found || is(l)
			}
		case *ast.IncDecStmt:
			found = found || is(n.X)
		case *ast.UnaryExpr:
			found = found || n.Op == token.AND && is(n.X)
		}
		return !found
	})
	return found
}

// invisible reports whether the statements touch only unshared locals of
// basic types and call nothing but runtime.Gosched: Gosched, loops that
// only yield, ifs and blocks of such, assignments and increments of such
// locals. It adds the variables assigned to assigned.
func (w *Rewriter) invisible(list []ast.Stmt, assigned map[*types.Var]bool) bool {
	target := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		if !ok {
			return false
		}
		v, ok := w.Info.Uses[id].(*types.Var)
		if !ok {
			v, ok = w.Info.Defs[id].(*types.Var)
		}
		if ok && w.localVar(v) {
			assigned[v] = true
			return true
		}
		return false
	}
	for _, s := range list {
		switch s := s.(type) {
		case *ast.EmptyStmt:
		case *ast.ExprStmt:
			if w.gosched(s) == nil {
				return false
			}
		case *ast.ForStmt:
			if w.goschedLoop(s) == nil {
				return false
			}
		case *ast.BlockStmt:
			if !w.invisible(s.List, assigned) {
				return false
			}
		case *ast.IfStmt:
			if s.Init != nil || !w.local(s.Cond, nil) || !w.invisible(s.Body.List, assigned) {
				return false
			}
			if s.Else != nil && !w.invisible([]ast.Stmt{s.Else}, assigned) {
				return false
			}
		case *ast.IncDecStmt:
			if !target(s.X) {
				return false
			}
		case *ast.AssignStmt:
			if !w.localAssign(s, target, nil) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// spinCond is the condition of a spin loop rewritten: the CAS after
// rt.SpinCAS, which waits under control until the load says it would
// succeed.
func spinCond(note *spinNote) ast.Expr {
	pos := note.cas.Pos()
	ready := &ast.FuncLit{
		Type: &ast.FuncType{Func: pos, Params: &ast.FieldList{}, Results: &ast.FieldList{List: []*ast.Field{{Type: &ast.Ident{Name: "bool", NamePos: pos}}}}},
		Body: &ast.BlockStmt{Lbrace: pos, Rbrace: pos, List: []ast.Stmt{&ast.ReturnStmt{Return: pos, Results: []ast.Expr{&ast.BinaryExpr{X: note.load, OpPos: pos, Op: token.EQL, Y: note.old}}}}},
	}
	return &ast.UnaryExpr{Op: token.NOT, X: rtCall("Then", rtCall("SpinCAS", ready), note.cas)}
}

// cloneExpr copies an expression that stable or address accepts (nil
// for another).
func cloneExpr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.Ident:
		return &ast.Ident{Name: e.Name, NamePos: e.NamePos}
	case *ast.BasicLit:
		return &ast.BasicLit{Kind: e.Kind, Value: e.Value, ValuePos: e.ValuePos}
	case *ast.ParenExpr:
		return wrap(cloneExpr(e.X), func(x ast.Expr) ast.Expr { return &ast.ParenExpr{X: x} })
	case *ast.StarExpr:
		return wrap(cloneExpr(e.X), func(x ast.Expr) ast.Expr { return &ast.StarExpr{X: x} })
	case *ast.UnaryExpr:
		return wrap(cloneExpr(e.X), func(x ast.Expr) ast.Expr { return &ast.UnaryExpr{Op: e.Op, X: x} })
	case *ast.SelectorExpr:
		return wrap(cloneExpr(e.X), func(x ast.Expr) ast.Expr {
			return &ast.SelectorExpr{X: x, Sel: &ast.Ident{Name: e.Sel.Name, NamePos: e.Sel.NamePos}}
		})
	case *ast.CallExpr:
		if len(e.Args) != 1 {
			return nil
		}
		fun, arg := cloneExpr(e.Fun), cloneExpr(e.Args[0])
		if fun == nil || arg == nil {
			return nil
		}
		return &ast.CallExpr{Fun: fun, Args: []ast.Expr{arg}}
	}
	return nil
}

func wrap(x ast.Expr, f func(ast.Expr) ast.Expr) ast.Expr {
	if x == nil {
		return nil
	}
	return f(x)
}

// sharedVars returns the local variables of f that another goroutine may
// reach: those that a function literal refers to while they are declared
// outside it (a closure, perhaps run by a go statement), and those whose
// address is taken.
func (w *Rewriter) sharedVars(f *ast.File) map[*types.Var]bool {
	shared := map[*types.Var]bool{}
	var lits []*ast.FuncLit // the function literals around the node, innermost last
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			if _, ok := stack[len(stack)-1].(*ast.FuncLit); ok {
				lits = lits[:len(lits)-1]
			}
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.FuncLit:
			lits = append(lits, n)
		case *ast.UnaryExpr:
			if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && n.Op == token.AND {
				if v, ok := w.Info.Uses[id].(*types.Var); ok {
					shared[v] = true
				}
			}
		case *ast.Ident:
			if v, ok := w.Info.Uses[n].(*types.Var); ok && len(lits) > 0 {
				if lit := lits[len(lits)-1]; v.Pos() < lit.Pos() || v.Pos() >= lit.End() {
					shared[v] = true
				}
			}
		}
		return true
	})
	return shared
}
