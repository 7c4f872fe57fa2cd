// Package guard is how the property suite calls code it does not trust:
// the user's constructor (Fresh: nil, a panic, or a nil executor is an
// error that says so) and the executor's methods (Call: a panic is an
// error, a *Panic naming the method, never a crash of the suite;
// CloseWithin: a Close that does not return in time is an error, and the
// executor is abandoned). What the suite does then:
//
//	constructor nil, returns nil, panics    the run fails at once with that message
//	Spawn, Wait, Close or Join panics       a violation of the case (exactly-once), with the panic's value
//	Close of a fresh executor never returns the run fails after a bound (10 s)
//	Close at the end of a case never returns the case is a hang (the watcher), the executor abandoned
//
// The controller's abort, which unwinds a controlled run's goroutines when
// it stops, is not the executor's: Call lets it go on unwinding.
package guard
