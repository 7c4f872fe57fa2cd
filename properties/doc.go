// Package properties is the conformance suite for any executor: one call
// runs every property of the execspec model on the executors a constructor
// makes, with workloads that rapid generates and shrinks.
//
//	func TestMyExecutor(t *testing.T) {
//		properties.Run(t, func() executor.Executor { return myexec.New(4) })
//	}
//
// Like testing/fstest.TestFS and nettest.TestConn, Run takes a constructor:
// each case gets a fresh executor and runs under a timeout; each property is
// a subtest named with the rule it protects ("no-lost-wakeup[WAKE]"); a
// failure is a shrunk workload with a stable message, its volatile detail in
// the log. Check runs the same suite outside a test and returns a Report
// (`verify run` uses it); CheckErr returns its failures joined.
//
// Vocabulary:
//   - Property: a declared value (Properties lists them): a Name, a Doc line,
//     the Rule of the model or the named Contract it protects, the Shape of
//     the workloads it draws, and a Check of what one case observed. Config
//     Only and Skip filter them by name.
//   - Workload: the tasks of one case. A task is a program of Pending polls,
//     each woken in a drawn way (during the poll, from another goroutine
//     before, during or after it, through a clone of the waker, several
//     times), poking other tasks and spawning children, then a poll that
//     returns Ready or panics. A fairness workload is endless tasks woken
//     after every poll: by themselves, in rings, or from outside.
//   - Probe: the future of a generated task. It observes every poll and
//     every wake of its task on one logical clock, so an executor that
//     reports nothing is still checked (black box).
//   - Observation: what a case saw: how it ended (Wait, Close, a violation,
//     or a hang: no progress for Config.Idle), every task's polls and
//     wakes, the violations seen while it ran, and the executor's trace when
//     it reports one.
//
// The properties: exactly-once completion (and Join's value or error); no concurrent poll; no poll
// after Ready; fairness (□◇ready ⇒ □◇polled, within the executor's stated
// bound, or the default one); Close waits for every task; the waker
// contract (a wake during a poll, from any goroutine, through a clone; no
// lost wakeup; idempotence: every poll is owed to a wake of its own);
// liveness (a hang names the unfinished tasks and the wakes they were
// waiting for); and, for an executor that is an executor.Reporter and an
// executor.Describer, conformance of its trace to the model and
// linearizability of its history (package checker/lin), and, when it is
// also executor.Controllable, work conservation (no worker left parked
// while a task waits that it could take: conserve.go).
//
// Every case checks every property (conformance and linearizability only
// on their own cases, for their cost), so a workload drawn for one can fail
// another; the report names the check that failed and the property whose
// cases found it.
//
// One defect, one failure, root cause first. On a failing case the check
// that failed first is the failure: conformance's, when the executor
// reports its trace (its first violating event is the earliest departure
// from the model; it is checked on every failing case, and on a controlled
// case stopped early up to the trace's first gap), else the earliest
// violation seen, else the first in list order; the other checks that
// failed on the case are listed as its Consequences. A later property's
// case that fails first in a check already reported (or in one it can
// follow from, Property.ConsequenceOf) is Masked: not reported again,
// while the property goes on with fresh cases, so a second, independent
// defect is still found. A property whose own check failed only on such
// cases is Violated all the same, with its Standing (ReportedElsewhere or
// Consequence), its Cause and the property it is ReportedUnder; its
// subtest fails with one line saying so. Run prints each
// failure in at most 60 lines, writes the full detail beside rapid's
// failfile, and gives the one command that replays it; Run and Check return
// a Report (per property: verdict, cases, time, failure, Figures).
//
// Outcomes. A generated task finishes with its value, with an error (a
// Ready executor.Failed), or with a panic; Join must return the value or
// the error. A retrying executor must run a failed task from a fresh
// future: polling the finished one again fails no-poll-after-ready.
//
// What the executor states. Fairness is checked against the bound the
// executor states, in polls (executor.Bounded) or in time
// (executor.BoundedWait), or that Config sets; with none, against the
// default bound (1,000 polls of other tasks by every worker and 1 s;
// internal/fair says why). Polls of others count per worker, and a wait is
// judged by the least busy worker of the executor: one worker can hold a
// ready task (in its local queue, between its take and its poll) while the
// operating system stops it and the others poll their own tasks; a wait
// of more than 5 s of the process's CPU time counts all workers' polls
// summed, and a bound in time leaves out the time the process was kept
// from running. Only an
// executor that states it promises no fairness (executor.FairnessPromiser)
// gets the figures (the most polls of others between ready and poll, the
// least busy worker's share of them, the longest wait) as information.
// Spurious polls (a poll no wake accounts for) are counted; they fail
// waker-idempotence only for an executor that states it never
// polls spuriously (executor.SpuriousPoller).
//
// No runaway. Once a case is over, a poll of one of its futures never
// returns (under a controller, the run stops at the first violation), the
// executor is closed with a deadline, and each case keeps at most 32
// violations and 16,384 polls and wakes per task: an executor that goes on
// polling after a failure is stopped instead of filling memory.
//
// Timing. Black-box cases see what the Go scheduler makes happen. A hang is
// declared only when nothing happened for Config.Idle while the watcher
// itself ran on time (for a second period if some goroutine could still
// run at the end of the first), and a task counts as starved only when
// every worker polled many others while it waited, for some milliseconds,
// so that a loaded machine does not raise false alarms.
//
// The instrumented engine. An executor that is not executor.Controllable
// (or run with NoHook) is still controlled when its package is
// instrumented: under `verify test ./pkg --instrument PATTERN` (UnderEngine)
// each case is one controlled run of instrument/rt — its goroutines,
// channels, locks and atomics are the yield points, the schedule is drawn
// from rapid with the workload (PCT with -strategy pct) and shrinks with
// it, a hang is the scheduler's deadlock, and a failure replays from
// rapid's failfile through `verify test --replay FILE`. The test calling
// Run must carry a //execspec:nocontrol line (Run makes the runs itself);
// instrumented.go says what maps to what. Under `verify test --time D`
// the properties of a Run share D, each taking an equal part of what is
// left when it starts, and hold on the cases their part allowed. An
// executor whose goroutines
// turn out not to be controlled (its package left out) fails the test
// with a message that says so.
//
//	//execspec:nocontrol
//	func TestMyExecutor(t *testing.T) {
//		properties.Run(t, func() executor.Executor { return myexec.New(4) })
//	}
//
// Layout. This package is the suite: Run, Check, Config and its options,
// the properties, the case runner and its probes, the report. Spec
// coverage is package properties/coverage (coverage.Run, what `verify
// cover` runs; Config.Coverage adds it to the suite with a goal). Under
// internal/ are the pieces no user names: fair (the fairness measure),
// watch (the black-box watcher), guard (calls into the executor and its
// constructor), rapidrun (driving rapid), onengine (what the suites share
// about the instrumented engine) and text. Goroutine pools are checked by
// properties/pool; the strategies and schedules are properties/control.
//
// Rapid reads its settings from flags: Run and Check set -rapid.checks and
// -rapid.shrinktime for their duration (from Config), so do not run them in
// parallel with other rapid checks. -properties.checks (or the environment
// variable PROPERTIES_CHECKS) sets the default number of cases per property,
// 200.
package properties
