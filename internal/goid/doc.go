// Package goid tells goroutines apart: Curg returns a number that
// identifies the calling goroutine for as long as it lives, the address
// of its runtime descriptor (assembly, amd64 and arm64) or its id parsed
// from runtime.Stack (elsewhere). Two goroutines alive at the same time
// never share a number; a goroutine started after another exited may
// reuse its number, so a holder of a number clears it when its goroutine
// ends.
//
// The executors use it to know whether a call comes from one of their
// workers:
//
//	gs[w].Store(goid.Curg()) // worker w, at its start
//	if gs[w].Load() == goid.Curg() { /* called from worker w */ }
package goid
