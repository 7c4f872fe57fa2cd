// Package rtstd holds the controlled runtime's replacements of the
// standard library's pieces that rewritten code would otherwise run
// outside the scheduler, or differently in each replay: the types of
// package sync (Mutex, RWMutex, WaitGroup, Once, Cond, NewCond; the
// rewriter's sync rule), ranges over maps (MapOrdered, MapAny; the
// maprange rule), math/rand's top-level functions (Rand; the rand
// rule) and, in a test's own code, the functions of time and context
// that make a timer (TestAfter, ..., TestWithTimeout, ...; the testtimer
// rule: the test's timers, which early timers never rush). Rewritten code
// imports it as execspecstd, beside instrument/rt as execspecrt, in the
// files that use it only.
//
// Vocabulary:
//   - Each sync type, called by the controlled goroutine holding control,
//     is a yield point of instrument/rt and blocks in its scheduler
//     until it can complete (rt.Holding, rt.Holder.Block), with the
//     operation codes of rt (rt.OpLock, ...) that a schedule's checksum
//     mixes; called by any other goroutine, or outside a run, it is the
//     real sync type it wraps. Its controlled state belongs to one run
//     (rt.Holder.Run): a Mutex left locked by a stopped run is free in
//     the next. A Once done in one run stays done, as in a process.
//   - The controlled and the real halves are not synchronized with each
//     other: a value shared between controlled and uncontrolled
//     goroutines during a run is not protected (the overlay of the
//     standard library's own sync, rt.StdSync, is what covers code that
//     was not rewritten).
//   - A map range in rewritten code produces the entries in the order of
//     the keys (Go randomizes it), so a replay takes the same path;
//     entries deleted before they are reached are skipped, as in Go.
//   - math/rand's functions draw, on the goroutine holding control, from
//     a source of the run seeded with a constant (Rand): a replay draws
//     the same numbers.
//   - A test timer is the standard one, registered with the run as the
//     test's own (rt.OwnTimer, rt.OwnFuncTimer): time passes early only
//     to timers due strictly before every pending test timer.
//
// The rewriter turns
//
//	var mu sync.Mutex
//	for _, v := range m { mu.Lock(); total += v; mu.Unlock() }
//
// into
//
//	var mu execspecstd.Mutex
//	for _, v, _rt_it1 := execspecstd.MapOrdered(m).Start(); _rt_it1.Next(nil, &v); {
//		mu.Lock(); total += v; mu.Unlock()
//	}
package rtstd
