// Package harness runs Go tests under the controlled runtime
// (instrument/rt): it makes a test's runs with a strategy, reports the
// first failing one with its schedule and the command that replays it,
// writes a record of each test for verify test, and keeps schedule
// files. The rewriter wraps each TestXxx function of a package under
// test in Test; a test written for control calls TestWith, and a suite
// that makes its own runs (the pool suite) takes them over with Own.
//
// Vocabulary:
//   - Options say how a test's runs are made: the strategy (random,
//     PCT with a depth, or the replay of a schedule file), the seed, how
//     many runs or how much time (a Budget), where failing schedules go
//     (Out, DefaultOut, SchedulePath), the report file and the replay
//     command to print. OptionsFromEnv reads them from the EXECSPEC_*
//     variables that verify test sets (EnvRuns, EnvSchedule, ...).
//   - Test and TestWith make the runs, each in a bubble of its own
//     (rt.Bubble), one goroutine at a time; the first run that fails (a
//     deadlock, a leak, a panic, a failed t) fails the test, saves its
//     schedule and prints how to replay it. A replay checks that the run
//     made the schedule's choices and reproduced its steps and checksum.
//   - An Outcome is the record of one test's runs (how many, the first
//     failure, its kind, schedule and checksum, whether a replay
//     matched, the time spent), one JSON line per test in the report
//     file; ReadReport reads them back.
//   - A schedule file is a schedule (properties/control/sched's text
//     form) with comment lines before it: the Meta a suite keeps beside
//     it (the case that ran) and the runtime's mode of early timers,
//     which a replay takes from the file (SaveSchedule, LoadSchedule).
//   - A Session is a test body's own runs, made one at a time in one
//     bubble, each failure returned as a value (Run, RunWith, Replay),
//     with the Options' strategy, budget (Spent) and report (Failed,
//     Close). Own hands a body that Test or TestWith runs its Session.
//
// Nothing here prints or exits: failures go to the test's *testing.T,
// progress lines (ProgressPrefix) to its log.
//
//	func TestTune(t *testing.T) {
//		harness.TestWith(t, harness.Options{Strategy: "pct", Runs: 1000}, func(t *testing.T) {
//			// code that uses instrumented packages
//		})
//	}
package harness
