package rt

import "github.com/execspec/execspec/instrument/rt/rtproc"

// HoldOneProc puts the process on one P until release is called, unless
// GOMAXPROCS is set in the environment; holds nest (rtproc.HoldOneProc).
// The settle watchdog holds it while a bubble that makes controlled runs
// lives, and each run holds it too; a caller that makes many runs, each
// in a bubble of its own (harness.TestWith), holds it across them.
func HoldOneProc() (release func()) { return rtproc.HoldOneProc() }

// GOMAXPROCS is runtime.GOMAXPROCS for instrumented code (the rewriter's
// gomaxprocs rule): while the process is held on one P, it reports the
// value the process had, or what the program set since
// (rtproc.GOMAXPROCS).
func GOMAXPROCS(n int) int { return rtproc.GOMAXPROCS(n) }
