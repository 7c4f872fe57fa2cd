// Package rapidrun is how the property suite drives rapid outside a
// test's own rapid.Check loop: a TB that keeps what rapid reports (the
// suite prints at most 60 lines of a failure and writes the rest to a
// file), rapid's flags set for the length of a run (WithFlags: rapid reads
// -rapid.checks, -rapid.seed and the others from package flags), the seed
// and the failfile read back from rapid's report (Seed, Failfile), and the
// Strategy of a case on the instrumented engine, whose every choice is a
// rapid draw so that the schedule shrinks with the workload.
package rapidrun
