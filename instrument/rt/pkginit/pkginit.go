// Package pkginit is the registry of the rewritten packages'
// initialisation, run again by each controlled run of instrument/rt.
//
// A rewritten package (instrument's package-init rule) registers, when
// the program initialises it, a function that runs its initialisation
// again (Register): every package-level variable saved and set to its
// zero value (Keep), then its variables' initialisers in the
// specification's order, then its init functions. The runtime runs them
// (Registry.Again) at the start of each run, on goroutine 0 and under
// control, in the order the program initialised the packages (each after
// the packages it imports), each package once; then the run's body runs.
// A run is thus a fresh program for the instrumented packages: what their
// initialisation starts (a default pool's dispatcher goroutine, a purge
// ticker) is controlled like the body's goroutines and takes the same
// locks, instead of running outside the bubble, where touching a channel
// of the run is a fatal error of the Go runtime, or uncontrolled in it,
// where the run's locks and wait groups are not its own; and no state is
// carried from one run to the next, so a replay in a fresh process meets
// what the failing run met. When the run is over every variable gets
// back the value the program's own initialisation gave it (the restore
// function of Again), so code outside the runs never touches a finished
// run's state.
//
// The rewriter's generated file of a package reads
//
//	func init() { execspecinit.Register("path", _rt_pkginit) }
//
//	func _rt_pkginit(keep func(func())) {
//		keep(execspecinit.Keep(&a)); keep(execspecinit.Keep(&b)); ...
//		_rt_pkginit0() // the initialisers, then the init functions
//	}
package pkginit

import (
	"runtime/debug"
	"sync"
)

// Registry is a list of registered packages. Safe for concurrent use.
type Registry struct {
	mu   sync.Mutex
	list []pkg
	seen map[string]bool
}

type pkg struct {
	path string
	run  func(keep func(func()))
}

// Default is the registry that Register adds to, and that the runtime's
// runs initialise.
var Default Registry

// Register registers the initialisation of the package at path in
// Default. The rewriter's package-init rule calls it from an init
// function of the package; a path registered twice keeps its first
// registration.
func Register(path string, run func(keep func(func()))) { Default.Register(path, run) }

// Register is the package-level Register, in r.
func (r *Registry) Register(path string, run func(keep func(func()))) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[path] {
		return
	}
	r.seen[path] = true
	r.list = append(r.list, pkg{path, run})
}

// Keep saves the variable at p, sets it to its zero value and returns
// the function that puts the saved value back.
func Keep[T any](p *T) func() {
	v := *p
	var zero T
	*p = zero
	return func() { *p = v }
}

// Len is how many packages are registered.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.list)
}

// Panic is a package's initialisation that panicked.
type Panic struct {
	Path  string // the package
	Value any    // what it panicked with
	Stack []byte // the stack at the panic
}

// Again runs the registered packages' initialisation again on the
// calling goroutine, in registration order, and returns the function
// that restores every variable it set (also when it fails) and the
// panic of a package's initialisation, or nil; the packages after it are
// not initialised.
func (r *Registry) Again() (restore func(), p *Panic) {
	r.mu.Lock()
	list := r.list
	r.mu.Unlock()
	var undo []func()
	restore = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	keep := func(f func()) { undo = append(undo, f) }
	for _, pk := range list {
		if p := pk.again(keep); p != nil {
			return restore, p
		}
	}
	return restore, nil
}

func (pk pkg) again(keep func(func())) (p *Panic) {
	defer func() {
		if v := recover(); v != nil {
			p = &Panic{Path: pk.path, Value: v, Stack: debug.Stack()}
		}
	}()
	pk.run(keep)
	return nil
}
