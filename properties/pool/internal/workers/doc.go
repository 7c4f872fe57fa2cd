// Package workers keeps what the pool suite knows, under the controlled
// runtime, of the goroutines that ran a case's tasks: which task each
// ran last, and how each ended — an idle expiry (housekeeping ran, or
// time passed with the pool blocked, since its last task returned) or a
// retirement (it left right after its task). properties/pool names the
// trigger of a progress finding after them (IdleExpiry, WorkerRetired).
//
// What it needs: calls on the goroutine that runs a task as the task
// starts and ends (Log.Start, Log.End), and the runtime's word as each
// such goroutine ends (rt.AtExit), which the suite completes with whether
// the exit counts (Exit). What it returns: the instants of the idle
// expiries and the retirements (Log.Exits).
package workers
