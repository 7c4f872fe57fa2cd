package instrument

import (
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The standard library's sync under control (Config.StdSync). The sync
// package of the go command's own Go installation is parsed and rewritten
// (never copied): each of the methods below is renamed execspecNAME and a
// method NAME is added that, when the calling goroutine holds control in a
// run of instrument/rt, first passes a yield point of the scheduler (or
// blocks in it until the value's real state lets the operation complete at
// once), and otherwise only calls execspecNAME. The calls of the runtime's
// semaphores and of runtime_notifyListWait go through functions that
// block in the scheduler until the real semaphore or ticket is released,
// and the go statement of WaitGroup.Go starts a controlled goroutine. The
// real state stays the only state: a value shared between controlled and
// uncontrolled goroutines keeps its meaning for both.
//
// A goroutine that does not hold control but runs in the bubble of a run
// (started by code that was not rewritten) and must wait for a Mutex or
// an RWMutex does not wait in the runtime's semaphore: testing/synctest
// does not count that wait as durably blocked, so the scheduler's
// settling (synctest.Wait) would wait for it as long as the holder, a
// controlled goroutine parked by the scheduler, keeps the lock: for ever.
// It tries the lock, and waits between tries on a channel of the bubble
// that every release in the bubble closes (instrument/rt's stdAwait), a
// durable wait: settling returns, the holder is scheduled, and a hang in
// which it takes part is a deadlock that names it. Cond.Wait and a
// WaitGroup.Wait of the bubble are durable as Go has them.
//
// package sync cannot import the runtime: the hooks are a table that
// instrument/rt stores in sync's execspecHooks at init through
// //go:linkname (the variable is pushed from sync, which Go 1.23 and later
// require). rt's own code, when it runs on a controlled goroutine, turns
// the hooks off (run.quiet).

// ErrStdSync is the error of a sync package that the overlay does not know
// how to rewrite (a Go version whose sync differs from the one the
// overlay was written for).
var ErrStdSync = errors.New("the standard library's sync cannot be put under control")

// stdSyncSupported names the versions whose sync the overlay was written
// for; others are refused if their sync differs where it matters.
const stdSyncSupported = "Go 1.25 and 1.26"

// stdSyncMethods are the methods wrapped, by receiver type (those of
// stdSyncYields, and WaitGroup.Add). A missing one is an unsupported
// version; WaitGroup.Go (Go 1.25) is optional.
var stdSyncMethods = func() map[string][]string {
	m := map[string][]string{"WaitGroup": {"Add"}}
	for _, y := range stdSyncYields {
		typ := strings.TrimPrefix(strings.Fields(y.recv)[1], "*")
		m[typ] = append(m[typ], y.name)
	}
	return m
}()

// stdSyncCalls are the runtime's blocking calls of package sync, each
// replaced by the function that blocks in the scheduler first; each has
// one call site.
var stdSyncCalls = func() []string {
	calls := []string{"runtime_notifyListWait"}
	for _, m := range stdSyncSemas {
		calls = append(calls, "runtime_"+m.name)
	}
	return calls
}()

// StdSync writes into out an overlay of the sync package of the Go
// installation at goroot (version names it in errors) and returns its
// entries: a file of goroot's sync → its rewritten form in out.
func StdSync(goroot, version, out string) (map[string]string, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s (the overlay is written for the sync of %s)", ErrStdSync, version, fmt.Sprintf(format, args...), stdSyncSupported)
	}
	dir := filepath.Join(goroot, "src", "sync")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, bad("%v", err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	ctxt := build.Default
	ctxt.GOROOT = goroot
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		if ok, err := ctxt.MatchFile(dir, n); err != nil || !ok {
			continue // not built here (build constraints)
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, bad("%v", err)
		}
		if f.Name.Name == "sync" {
			files[filepath.Join(dir, n)] = f
		}
	}
	mutexBits, err := internalMutexBits(goroot)
	if err != nil {
		return nil, bad("%v", err)
	}
	if err := checkStdSyncTypes(files); err != nil {
		return nil, bad("%v", err)
	}
	ownLocks := packageLocks(files)
	if len(ownLocks) == 0 {
		return nil, bad("no package-level Mutex (Pool's allPoolsMu) in %s", dir)
	}
	changed := map[string]bool{}
	found := map[string]bool{}
	calls := map[string]int{}
	gos := 0
	for name, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			recv := recvType(fd)
			if slices.Contains(stdSyncMethods[recv], fd.Name.Name) || (recv == "WaitGroup" && fd.Name.Name == "Go") {
				found[recv+"."+fd.Name.Name] = true
				if recv != "WaitGroup" || fd.Name.Name != "Go" {
					fd.Name = ast.NewIdent("execspec" + fd.Name.Name)
					changed[name] = true
				}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok {
						if slices.Contains(stdSyncCalls, id.Name) {
							calls[id.Name]++
							fn := strings.TrimPrefix(id.Name, "runtime_")
							id.Name = "execspec" + strings.ToUpper(fn[:1]) + fn[1:]
							changed[name] = true
						}
					}
					// An RWMutex's writer lock (its methods already passed
					// their yield point) and sync's own package-level locks
					// (Pool's, taken with the processor pinned: no yield
					// point may park there) are taken as they were.
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok && slices.Contains(stdSyncMethods["Mutex"], sel.Sel.Name) {
						in, isSel := sel.X.(*ast.SelectorExpr)
						id, isID := sel.X.(*ast.Ident)
						if (recv == "RWMutex" && isSel && in.Sel.Name == "w") || (isID && ownLocks[id.Name]) {
							sel.Sel = ast.NewIdent("execspec" + sel.Sel.Name)
							changed[name] = true
						}
					}
				case *ast.GoStmt:
					gos++
				}
				return true
			})
		}
	}
	for recv, ms := range stdSyncMethods {
		for _, m := range ms {
			if !found[recv+"."+m] {
				return nil, bad("(*%s).%s not found in %s", recv, m, dir)
			}
		}
	}
	for _, c := range stdSyncCalls {
		if calls[c] != 1 {
			return nil, bad("%d calls of %s in %s, expected 1", calls[c], c, dir)
		}
	}
	hasGo := found["WaitGroup.Go"]
	if want := map[bool]int{false: 0, true: 1}[hasGo]; gos != want {
		return nil, bad("%d go statements in %s, expected %d", gos, dir, want)
	}
	if hasGo {
		for name, f := range files {
			if rewriteGoStmts(f) {
				changed[name] = true
			}
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	entries := map[string]string{}
	for name := range changed {
		src, err := Format(fset, files[name], true)
		if err != nil {
			return nil, fmt.Errorf("%s: printing the rewritten file: %w", name, err)
		}
		dst := filepath.Join(out, filepath.Base(name))
		if err := os.WriteFile(dst, src, 0o644); err != nil {
			return nil, err
		}
		entries[name] = dst
	}
	gen := strings.NewReplacer("GOVERSION", version, "MUTEXBITS", strconv.Itoa(mutexBits)).Replace(stdSyncControl) + stdSyncWrappers()
	if hasGo {
		gen += stdSyncGo
	}
	src, err := format.Source([]byte(gen))
	if err != nil {
		return nil, fmt.Errorf("the generated sync file: %w", err)
	}
	dst := filepath.Join(out, "execspec_control.go")
	if err := os.WriteFile(dst, src, 0o644); err != nil {
		return nil, err
	}
	entries[filepath.Join(dir, "execspec_control.go")] = dst
	return entries, nil
}

// packageLocks names sync's package-level variables of type Mutex.
func packageLocks(files map[string]*ast.File) map[string]bool {
	locks := map[string]bool{}
	eachSpec(files, token.VAR, func(s ast.Spec) {
		vs := s.(*ast.ValueSpec)
		if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Mutex" {
			for _, n := range vs.Names {
				locks[n.Name] = true
			}
		}
	})
	return locks
}

// eachSpec calls f with each spec of the files' declarations of tok.
func eachSpec(files map[string]*ast.File, tok token.Token, f func(ast.Spec)) {
	for _, file := range files {
		for _, d := range file.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == tok {
				for _, s := range gd.Specs {
					f(s)
				}
			}
		}
	}
}

func recvType(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) != 1 {
		return ""
	}
	if st, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
		if id, ok := st.X.(*ast.Ident); ok {
			return id.Name
		}
	}
	return ""
}

// rewriteGoStmts turns each go func() {...}() into execspecGo(func() {...}).
func rewriteGoStmts(f *ast.File) bool {
	done := false
	ast.Inspect(f, func(n ast.Node) bool {
		blk, ok := n.(*ast.BlockStmt)
		if !ok {
			return true
		}
		for i, s := range blk.List {
			g, ok := s.(*ast.GoStmt)
			if !ok || len(g.Call.Args) != 0 {
				continue
			}
			if lit, ok := g.Call.Fun.(*ast.FuncLit); ok {
				blk.List[i] = &ast.ExprStmt{X: &ast.CallExpr{Fun: ast.NewIdent("execspecGo"), Lparen: g.Go, Args: []ast.Expr{lit}}}
				done = true
			}
		}
		return true
	})
	return done
}

// checkStdSyncTypes checks the fields that the generated code reads.
func checkStdSyncTypes(files map[string]*ast.File) error {
	want := map[string][]string{
		"Mutex":      {"mu"},
		"RWMutex":    {"w", "writerSem", "readerSem", "readerCount", "readerWait"},
		"WaitGroup":  {"state"},
		"Once":       {"done", "m"},
		"notifyList": {"wait", "notify"},
	}
	seen := map[string][]string{}
	eachSpec(files, token.TYPE, func(s ast.Spec) {
		ts := s.(*ast.TypeSpec)
		if st, ok := ts.Type.(*ast.StructType); ok {
			for _, fl := range st.Fields.List {
				for _, n := range fl.Names {
					seen[ts.Name.Name] = append(seen[ts.Name.Name], n.Name)
				}
			}
		}
	})
	for typ, fields := range want {
		for _, fl := range fields {
			if !slices.Contains(seen[typ], fl) {
				return fmt.Errorf("sync.%s has no field %s", typ, fl)
			}
		}
	}
	return nil
}

// internalMutexBits reads, from internal/sync, the bits of a Mutex's state
// (its first field, an int32) that say it cannot be taken at once.
func internalMutexBits(goroot string) (int, error) {
	name := filepath.Join(goroot, "src", "internal", "sync", "mutex.go")
	f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
	if err != nil {
		return 0, err
	}
	first := ""
	consts := map[string]int{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for i, s := range gd.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if st, ok := s.Type.(*ast.StructType); ok && s.Name.Name == "Mutex" && len(st.Fields.List) > 0 && len(st.Fields.List[0].Names) > 0 {
					if id, ok := st.Fields.List[0].Type.(*ast.Ident); ok {
						first = st.Fields.List[0].Names[0].Name + " " + id.Name
					}
				}
			case *ast.ValueSpec:
				// mutexLocked = 1 << iota; mutexWoken; mutexStarving
				if gd.Tok == token.CONST && len(s.Names) == 1 {
					consts[s.Names[0].Name] = 1 << i
				}
			}
		}
	}
	if first != "state int32" {
		return 0, fmt.Errorf("internal/sync.Mutex does not begin with state int32 (%s)", name)
	}
	if consts["mutexLocked"] != 1 || consts["mutexStarving"] != 4 {
		return 0, fmt.Errorf("internal/sync's mutexLocked and mutexStarving are not 1 and 4 (%s)", name)
	}
	return consts["mutexLocked"] | consts["mutexStarving"], nil
}

// stdSyncControl is the file added to sync.
const stdSyncControl = `// Code generated by execspec for the sync package of GOVERSION. DO NOT EDIT.

package sync

import (
	"internal/race"
	"internal/synctest"
	"sync/atomic"
	"unsafe"
)

// execspecTable is the scheduler's side (instrument/rt's stdTable, the
// same layout): controlled reports whether the calling goroutine holds
// control in a run; block is a yield point that returns once ready holds
// (nil: at once); spawn starts a controlled goroutine; await, for a
// goroutine that does not hold control, calls try until it succeeds,
// waiting durably in the run's bubble between tries, and returns false
// at once if the caller is in no run's bubble; release tells await's
// waiters that a lock was let go.
type execspecTable struct {
	controlled func() bool
	block      func(op int, what string, ready func() bool)
	spawn      func(f func())
	await      func(what string, try func() bool) bool
	release    func()
}

// execspecHooks is a *execspecTable, stored by instrument/rt at init.
//
//go:linkname execspecHooks
var execspecHooks unsafe.Pointer

// execspecOverlaid tells instrument/rt that this overlay is linked.
//
//go:linkname execspecOverlaid
var execspecOverlaid = true

// execspecAssociate and execspecInBubble, pulled by instrument/rt, tie a
// value to the calling goroutine's synctest bubble and tell whether the
// calling goroutine is in the bubble a value is tied to.
//
//go:linkname execspecAssociate
var execspecAssociate = func(p *uint64) bool {
	return synctest.IsInBubble() && synctest.Associate(p) == synctest.CurrentBubble
}

//go:linkname execspecInBubble
var execspecInBubble = func(p *uint64) bool { return synctest.IsInBubble() && synctest.IsAssociated(p) }

// execspecWaiting counts the goroutines in execspecAwait: a release tells
// the scheduler only while some wait (the count is raised before the
// waiter's try, read after the releaser's unlock).
var execspecWaiting atomic.Int32

// execspecAwait: the caller does not hold control and its try failed; in
// a run's bubble it waits there until try succeeds (true), elsewhere it
// returns false and the caller waits as Go does.
func execspecAwait(what string, try func() bool) bool {
	h := (*execspecTable)(atomic.LoadPointer(&execspecHooks))
	if h == nil || !synctest.IsInBubble() {
		return false
	}
	execspecWaiting.Add(1)
	defer execspecWaiting.Add(-1)
	return h.await(what, try)
}

// execspecRelease follows every Unlock and RUnlock.
func execspecRelease() {
	if execspecWaiting.Load() == 0 {
		return
	}
	if h := (*execspecTable)(atomic.LoadPointer(&execspecHooks)); h != nil {
		h.release()
	}
}

const (
	execspecOpLock = iota
	execspecOpUnlock
	execspecOpRLock
	execspecOpRUnlock
	execspecOpWait
	execspecOpSignal
	execspecOpOnce
)

func execspecControl() *execspecTable {
	h := (*execspecTable)(atomic.LoadPointer(&execspecHooks))
	if h == nil || !h.controlled() {
		return nil
	}
	return h
}

// execspecBlockRaceOff blocks where the caller turned the race detector's
// handling off: the scheduler's handovers must still order memory.
func execspecBlockRaceOff(h *execspecTable, op int, what string, ready func() bool) {
	if race.Enabled {
		race.Enable()
	}
	h.block(op, what, ready)
	if race.Enabled {
		race.Disable()
	}
}

// execspecFree reports whether m can be taken at once (the state of
// internal/sync's Mutex).
func (m *Mutex) execspecFree() bool {
	return atomic.LoadInt32((*int32)(unsafe.Pointer(&m.mu)))&MUTEXBITS == 0
}

// Done is Add(-1): a yield point after it, as after Unlock.
func (wg *WaitGroup) Add(delta int) {
	wg.execspecAdd(delta)
	if delta < 0 {
		if h := execspecControl(); h != nil {
			h.block(execspecOpSignal, "WaitGroup.Done", nil)
		}
	}
}

// execspecNotifyListWait waits until ticket t was notified (the runtime
// stores notify atomically).
func execspecNotifyListWait(l *notifyList, t uint32) {
	if h := execspecControl(); h != nil {
		h.block(execspecOpWait, "Cond.Wait", func() bool { return int32(t-atomic.LoadUint32(&l.notify)) < 0 })
	}
	runtime_notifyListWait(l, t)
}
`

// stdSyncYields are the yield points of the wrapped methods: each calls
// execspecNAME, the original, after (or, with after, before) passing the
// yield point op of the scheduler; with ready, a blocking one that returns
// once ready (an expression of the receiver) holds. With try (the
// method's own try), a caller that does not hold control tries first and
// waits in execspecAwait inside a run's bubble; a release (Unlock,
// RUnlock) tells such waiters.
var stdSyncYields = []struct {
	recv, name, params, args, result, op, ready, try string
	after                                            bool
}{
	{"m *Mutex", "Lock", "", "", "", "Lock", "m.execspecFree", "m.execspecTryLock", false},
	{"m *Mutex", "TryLock", "", "", "bool", "Lock", "", "", false},
	{"m *Mutex", "Unlock", "", "", "", "Unlock", "", "", true},
	{"rw *RWMutex", "Lock", "", "", "", "Lock", "rw.w.execspecFree", "rw.execspecTryLock", false},
	{"rw *RWMutex", "TryLock", "", "", "bool", "Lock", "", "", false},
	{"rw *RWMutex", "Unlock", "", "", "", "Unlock", "", "", true},
	{"rw *RWMutex", "RLock", "", "", "", "RLock", "func() bool { return rw.readerCount.Load() >= 0 }", "rw.execspecTryRLock", false},
	{"rw *RWMutex", "TryRLock", "", "", "bool", "RLock", "", "", false},
	{"rw *RWMutex", "RUnlock", "", "", "", "RUnlock", "", "", true},
	{"wg *WaitGroup", "Wait", "", "", "", "Wait", "func() bool { return int32(wg.state.Load()>>32) == 0 }", "", false},
	{"o *Once", "Do", "f func()", "f", "", "Once", "", "", false},
	{"c *Cond", "Signal", "", "", "", "Signal", "", "", true},
	{"c *Cond", "Broadcast", "", "", "", "Signal", "", "", true},
}

// stdSyncSemas are the runtime's semaphore waits of sync: a controlled
// goroutine waits in the scheduler until the semaphore is released.
var stdSyncSemas = []struct{ name, params, args, op, what string }{
	{"SemacquireWaitGroup", "s *uint32, synctestDurable bool", "s, synctestDurable", "Wait", "WaitGroup.Wait"},
	{"SemacquireRWMutexR", "s *uint32, lifo bool, skipframes int", "s, lifo, skipframes", "RLock", "RWMutex.RLock"},
	{"SemacquireRWMutex", "s *uint32, lifo bool, skipframes int", "s, lifo, skipframes", "Lock", "RWMutex.Lock"},
}

// stdSyncWrappers writes the wrapped methods and semaphore waits.
func stdSyncWrappers() string {
	var b strings.Builder
	for _, y := range stdSyncYields {
		typ := strings.TrimPrefix(strings.Fields(y.recv)[1], "*")
		ready := y.ready
		if ready == "" {
			ready = "nil"
		}
		pass := fmt.Sprintf("\tif h := execspecControl(); h != nil {\n\t\th.block(execspecOp%s, %q, %s)\n\t}", y.op, typ+"."+y.name, ready)
		if y.try != "" {
			pass += fmt.Sprintf(" else if %s() || execspecAwait(%q, %[1]s) {\n\t\treturn\n\t}", y.try, typ+"."+y.name)
		}
		pass += "\n"
		call := fmt.Sprintf("\t%s%s.execspec%s(%s)\n", map[bool]string{true: "return "}[y.result != ""], strings.Fields(y.recv)[0], y.name, y.args)
		if strings.HasSuffix(y.op, "Unlock") {
			call += "\texecspecRelease()\n"
		}
		fmt.Fprintf(&b, "\nfunc (%s) %s(%s) %s {\n", y.recv, y.name, y.params, y.result)
		if y.after {
			b.WriteString(call + pass)
		} else {
			b.WriteString(pass + call)
		}
		b.WriteString("}\n")
	}
	for _, m := range stdSyncSemas {
		fmt.Fprintf(&b, `
func execspec%[1]s(%[2]s) {
	if h := execspecControl(); h != nil && atomic.LoadUint32(s) == 0 {
		execspecBlockRaceOff(h, execspecOp%[4]s, %[5]q, func() bool { return atomic.LoadUint32(s) > 0 })
	}
	runtime_%[1]s(%[3]s)
}
`, m.name, m.params, m.args, m.op, m.what)
	}
	return b.String()
}

// stdSyncGo starts WaitGroup.Go's goroutine.
const stdSyncGo = `
func execspecGo(f func()) {
	if h := execspecControl(); h != nil {
		h.spawn(f)
		return
	}
	go f()
}
`
