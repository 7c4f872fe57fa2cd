package pool

import (
	"github.com/execspec/execspec/properties/pool/internal/workers"
)

// IdleExpiry is the trigger of a progress finding (Finding.Op) that
// followed a worker's idle expiry: a goroutine of the pool that had run
// a task of the case, and whose last task returned, ended with no task
// since, while the pool was open, after the pool's housekeeping (a
// goroutine woken by a ticker: an idle purge) had run, or after the pool
// had been idle for a while (virtual time passed while every goroutine
// of the pool was blocked: a timer ended its wait), since that task's
// end. That is how a worker
// that an idle purge stops ends (ants' purgeStaleWorkers, pond v1's
// maybeStopIdleWorker), or one whose own idle timer fires; a pool that
// loses a wakeup then (ants signals its condition variable without the
// pool's lock as the worker exits) is named for it rather than for the
// Submit or task end that began the stall.
//
// The suite sees it under control only, where the runtime tells it when a
// goroutine ends (rt.AtExit) and whether housekeeping ran
// (rt.HousekeepingSteps), and time is virtual:
//
//	the worker's last task   since its end                      its exit is
//	panicked, Goexit         -                                  not idle (the task's own trigger)
//	returned                 nothing (it left after its task)   a retirement (WorkerRetired)
//	returned                 housekeeping ran, or time passed   an idle expiry
//	                           with the pool blocked
//	any                      Close called                       not counted (the pool stops)
//
// Time that the schedule lets pass early (rt.Config.EarlyTimers) while
// a goroutine of the pool could run does not count (rt.EarlyTime): a
// worker held back after its task while a hold's timer fired did not
// wait (pond v2.5.0's workers, which never wait, were named so before).
// What the suite cannot tell apart: a worker that leaves after its task
// (a pool over its capacity) while the purge happens to run counts as
// idle too; one whose own idle timer fires early, while another
// goroutine of the pool could run, does not.
const IdleExpiry = "idle expiry"

// WorkerRetired is the trigger of a progress finding that followed a
// worker's retirement: a goroutine of the pool ended right after its task
// returned, with nothing in between (no housekeeping, no time with the
// pool blocked), while the pool was open. A pool over its capacity
// retires workers so (ants' revertWorker after a shrink, or with the
// workers the race of ants #374 spawned past it), and a pool that loses a
// wakeup then (ants' exiting worker signals without the pool's lock) is
// named for it rather than for the task end. Under control only, as
// IdleExpiry.
const WorkerRetired = "worker retired"

// workerLog is what the suite knows of the goroutines that ran the
// case's tasks (under control).
type workerLog = workers.Log

// workerStart is called by task id's body as it starts, on the
// goroutine that runs it; harness says that goroutine is the suite's own
// (a pool that runs a task on the submitter), which is no worker.
func (tr *tracker) workerStart(id int, harness bool) {
	if !tr.cfg.control || harness {
		return
	}
	tr.workers.Start(id, tr.exit)
}

// workerEnd is called as task id ends, on the goroutine that ran it;
// clock is the case's clock then (tracker.clock).
func (tr *tracker) workerEnd(id int, clock int64) {
	if tr.cfg.control {
		tr.workers.End(id, clock)
	}
}

// workerExit says of the exit of a goroutine whose last task was task
// when it is and whether it counts: the task returned while the pool was
// open. Its clock (the virtual time of the case less the time the
// schedule let pass early: it moves only while every goroutine of the
// pool is blocked) is that of its instant: a worker that the schedule
// held back after its task while a timer fired early sees it stand
// still: it did not wait.
func (tr *tracker) workerExit(task int) (at int64, counts bool, clock int64) {
	clock = tr.clock()
	at = tr.instant(clock)
	counts = tr.closeCallAt.Load() == 0 && tr.tasks[task].how.Load() == endReturned
	return at, counts, clock
}

// workerExits returns the instants of the case's idle expiries and of
// its retirements, each in order.
func (tr *tracker) workerExits() (idle, retired []int64) { return tr.workers.Exits() }
