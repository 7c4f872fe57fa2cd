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
// The properties: exactly-once completion; no concurrent poll; no poll
// after Ready; fairness (□◇ready ⇒ □◇polled, and the executor's stated bound
// when it is executor.Bounded); Close waits for every task; the waker
// contract (a wake during a poll, from any goroutine, through a clone; no
// lost wakeup; idempotence: every poll is owed to a wake of its own);
// liveness (a hang names the unfinished tasks and the wakes they were
// waiting for); and, for an executor that is an executor.Reporter and an
// executor.Describer, conformance of its trace to the model and
// linearizability of its history (package checker).
//
// Every case checks every property (conformance and linearizability only
// on their own cases, for their cost), so a workload drawn for one can fail
// another; the report names the check that failed and the property whose
// cases found it.
//
// Timing. Black-box cases see what the Go scheduler makes happen. A hang is
// declared only when nothing happened for Config.Idle while the watcher
// itself ran on time, and a task counts as starved only when it waited
// through many polls of others, some milliseconds, and polls by every
// worker, so that a loaded machine does not raise false alarms.
//
// Rapid reads its settings from flags: Run and Check set -rapid.checks and
// -rapid.shrinktime for their duration (from Config), so do not run them in
// parallel with other rapid checks. -properties.checks (or the environment
// variable PROPERTIES_CHECKS) sets the default number of cases per property,
// 200.
package properties
