package rt

import (
	"fmt"

	"github.com/execspec/execspec/instrument/rt/pkginit"
)

// Package initialisation in each run: the packages registered with
// pkginit (the rewriter's package-init rule) are initialised again at
// the start of each run, on goroutine 0 and under control, and by each
// Bubble.Do, uncontrolled, for the code it runs (package pkginit says
// why).
//
// The initialisation runs to its end before the goroutines it starts
// run (unless it blocks): it makes no decisions of the schedule.
// Goroutines started by the initialisation, and those they start, are
// daemons: when the body and every goroutine of its own are done, the
// run ends, as a program ends when main returns, and the daemons are
// unwound without a verdict; a hang or a leak names the body's
// goroutines. When the run is over every variable gets back the value
// the program's own initialisation gave it.

// packages is the registry the runs initialise (a test swaps it).
var packages = &pkginit.Default

// initPackages runs the registered packages' initialisation again on the
// calling goroutine (pkginit.Registry.Again) and returns the function
// that restores every variable it set (also when it fails) and the
// panic of a package's initialisation, naming the package.
func initPackages() (restore func(), err error) {
	restore, p := packages.Again()
	if p != nil {
		err = fmt.Errorf("execspec/rt: initialising package %s again in the session's bubble: %w", p.Path,
			&PanicError{G: -1, Value: p.Value, Stack: p.Stack})
	}
	return restore, err
}

// withPackages returns main preceded by the packages' initialisation (if
// any package registered), run on goroutine 0 with r.initing set so that
// the goroutines it starts are daemons, and the function that restores
// the variables, for when the run is over (its goroutines unwound). A
// panic of the initialisation is the run's failure, naming the package.
func (r *run) withPackages(main func()) (func(), func()) {
	if packages.Len() == 0 {
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
