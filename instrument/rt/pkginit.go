package rt

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// Package initialisation in each run.
//
// A rewritten package (instrument's package-init rule) registers, when
// the program initialises it, a function that runs its initialisation
// again: every package-level variable saved and set to its zero value,
// then its variables' initialisers in the specification's order, then
// its init functions. Each controlled run starts with them, on goroutine
// 0 and under control, in the order the program initialised the
// packages (each after the packages it imports), each package once; then
// the run's body runs. A run is thus a fresh program for the
// instrumented packages: what their initialisation starts (a default
// pool's dispatcher goroutine, a purge ticker) is controlled like the
// body's goroutines and takes the same locks, instead of running outside
// the bubble, where touching a channel of the run is a fatal error of the
// Go runtime, or uncontrolled in it, where the run's locks and wait
// groups are not its own; and no state is carried from one run to the
// next, so a replay in a fresh process meets what the failing run met.
//
// The initialisation runs to its end before the goroutines it starts
// run (unless it blocks): it makes no decisions of the schedule.
// Goroutines started by the initialisation, and those they start, are
// daemons: when the body and every goroutine of its own are done, the
// run ends, as a program ends when main returns, and the daemons are
// unwound without a verdict; a hang or a leak names the body's
// goroutines. When the run is over every variable gets back the value
// the program's own initialisation gave it, so code outside the runs
// never touches a finished run's state. Bubble.Do initialises the
// packages afresh the same way, uncontrolled, for the code it runs.

// pkgInit is one registered package.
type pkgInit struct {
	path string
	run  func(keep func(func()))
}

var pkgInits struct {
	sync.Mutex
	list []pkgInit
	seen map[string]bool
}

// PackageInit registers the initialisation of the package at path, run
// again by each run and each Bubble.Do. The rewriter's package-init rule
// calls it from an init function of the package; a path registered
// twice keeps its first registration.
func PackageInit(path string, run func(keep func(func()))) {
	pkgInits.Lock()
	defer pkgInits.Unlock()
	if pkgInits.seen == nil {
		pkgInits.seen = map[string]bool{}
	}
	if pkgInits.seen[path] {
		return
	}
	pkgInits.seen[path] = true
	pkgInits.list = append(pkgInits.list, pkgInit{path, run})
}

// Keep saves the variable at p, sets it to its zero value and returns
// the function that puts the saved value back.
func Keep[T any](p *T) func() {
	v := *p
	var zero T
	*p = zero
	return func() { *p = v }
}

// initPackages runs the registered packages' initialisation again on the
// calling goroutine, in registration order, and returns the function
// that restores every variable it set (also when it fails) and the
// panic of a package's initialisation, naming the package; the packages
// after it are not initialised.
func initPackages() (restore func(), err error) {
	pkgInits.Lock()
	list := pkgInits.list
	pkgInits.Unlock()
	var undo []func()
	restore = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	keep := func(f func()) { undo = append(undo, f) }
	for _, p := range list {
		if err := initPackage(p, keep); err != nil {
			return restore, err
		}
	}
	return restore, nil
}

func initPackage(p pkgInit, keep func(func())) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("execspec/rt: initialising package %s again in the session's bubble: %w", p.path,
				&PanicError{G: -1, Value: v, Stack: debug.Stack()})
		}
	}()
	p.run(keep)
	return nil
}

// withPackages returns main preceded by the packages' initialisation (if
// any package registered), run on goroutine 0 with r.initing set so that
// the goroutines it starts are daemons, and the function that restores
// the variables, for when the run is over (its goroutines unwound). A
// panic of the initialisation is the run's failure, naming the package.
func (r *run) withPackages(main func()) (func(), func()) {
	pkgInits.Lock()
	n := len(pkgInits.list)
	pkgInits.Unlock()
	if n == 0 {
		return main, func() {}
	}
	restore := func() {}
	return func() {
		r.initing = true
		rs, err := initPackages()
		restore = rs
		r.initing = false
		if err != nil {
			panic(err)
		}
		main()
	}, func() { restore() }
}
