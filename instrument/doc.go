// Package instrument rewrites Go source so that its concurrency passes
// through a scheduler: controlled interleavings for code that was not
// written for them — a third-party pool, a user's executor, any package.
//
// Vocabulary:
//   - A rewrite rule turns one construct (a go statement, a channel
//     operation, a select, a sync type, an atomic operation, Gosched,
//     GOMAXPROCS, NumGoroutine, Sleep) into calls of the runtime package instrument/rt
//     (sync's types and ranges over maps: instrument/rt/rtstd), keeping
//     Go's evaluation order; the test rule wraps a TestXxx function in a
//     call of the test harness, instrument/harness (harness.Test). Two
//     rules take out
//     yield points that cannot change what another goroutine observes
//     (spin.go): a loop that only yields yields once (goschedloop), and
//     a spin on a compare-and-swap waits until it would succeed
//     (spincas); each states the syntactic conditions that prove it. The rules and their
//     before/after forms are the table at the top of rewrite.go; each has
//     a golden test under testdata/rules and a test that the rewritten
//     program returns what the original returns, run freely and under
//     control (behave_test.go). The testtimer rule, for the _test.go
//     files of the packages under test only, makes the timers a test's
//     own code creates the test's, which early timers never rush
//     (rt/rtstd/testtimers.go, rt/testtimers.go); testtimers_test.go runs testdata/testtimers,
//     a guarded slow library and a library whose own timeout races.
//   - The package-init rule (pkginit.go) makes a package's initialisation
//     runnable again: its variables' initialisers become functions of
//     their own, its init functions are renamed and called from new ones,
//     and a file it adds registers the whole with the runtime
//     (rt/pkginit.Register). Each controlled run starts with it, on the run's
//     goroutine 0, every package after those it imports and each once,
//     with every package-level variable first set to zero as at the
//     program's start (those set by //go:embed excepted): what a package
//     starts at initialisation (pond v2.1.6's default pool and its
//     dispatcher goroutine) is one of the run's goroutines instead of one
//     outside the bubble, uncontrolled and fatal to touch. The program's
//     own initialisation still runs first, and each run puts back the
//     values it gave when it ends. Only the packages instrumented
//     wholesale get the rule; a package under test keeps its state (and
//     its tests' flags) as the binary made them. An initialisation that
//     registers something with a package that is not instrumented (a
//     flag, a database driver) registers it again, which such a package
//     may refuse with a panic: every run then fails with that panic,
//     naming the package; and what such packages registered in an
//     instrumented one at their own initialisation is not there in the
//     runs.
//   - A Rewriter rewrites the files of one type-checked package (source in,
//     source out); it knows nothing of scheduling. The runtime knows
//     nothing of syntax. Format prints a rewritten file, with //line
//     directives so that errors and stacks name the original lines.
//   - Instrument builds the whole thing for go test: it loads the packages
//     under test (their _test.go files too) and the packages named to be
//     instrumented with golang.org/x/tools/go/packages (type-checked from
//     source; their dependencies' types come from the go command's export
//     data), rewrites them into a directory of its own, and returns the
//     flags for go test: an
//     -overlay for files of the user's module, and a -modfile that
//     replaces each module of the module cache that was rewritten by a
//     copy (go test refuses overlays of module-cache files) and, if the
//     user's module does not require it, adds the runtime's module.
//     A copied module below go 1.18 is raised to it (rewritten code calls
//     generic functions). A pattern that names a package path covers the
//     linked packages below it, so a module's path names the module.
//     Nothing is written to the user's tree or to the module cache.
//   - With Config.Cache, a build is kept under the hash of what it is made
//     from (the sources of the packages that may be rewritten and of the
//     user's module, go.mod, go.sum, the Go version, the rewriter): an
//     unchanged build is reused as it is, at the same paths, so go's build
//     cache holds its compiled packages too.
//   - With Config.StdSync the standard library's sync is overlaid as
//     well (stdsync.go): generated from the go command's own
//     $GOROOT/src/sync by rewriting its syntax, never copied. Each
//     method of Mutex, RWMutex, WaitGroup, Once and Cond, and the
//     runtime's semaphore waits inside them, check a table of hooks that
//     instrument/rt stores in sync through //go:linkname (package sync
//     cannot import rt); called by the goroutine holding control they
//     are yield points and block in the scheduler until the value's real
//     state lets the call return at once, and WaitGroup.Go starts a
//     controlled goroutine. Called by any other goroutine, or outside a
//     run, they are Go's. sync's own package-level locks (Pool's, taken
//     with the processor pinned) are never yield points. A sync that
//     differs from what the rewriting expects (a method, a field, a
//     blocking call moved) is refused with ErrStdSync naming the Go
//     version. A limit: a goroutine started by code that was not
//     rewritten, inside the run's bubble, that waits for a sync.Mutex
//     held by a controlled goroutine parked at a yield point is not
//     durably blocked in synctest's terms, so the scheduler's settling
//     waits for it for good (the test's -timeout ends it); the package
//     that starts it must then be instrumented too.
//   - Uncontrolled packages: the packages linked into the test that were
//     not rewritten (apart from the standard library) are listed in the
//     Build, never silently trusted.
//
// Example (what `verify test` does):
//
//	b, err := instrument.Instrument(instrument.Config{
//		Dir:        ".",
//		Tests:      []string{"./pool"},
//		Instrument: []string{"github.com/panjf2000/ants/v2"},
//		Out:        tmp,
//		Cache:      filepath.Join(userCache, "execspec", "builds"),
//	})
//	// go test <b.Flags()...> -run TestTune ./pool   (EXECSPEC_RUNS=1000 ...)
package instrument
