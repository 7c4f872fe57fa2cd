// Package isolate runs part of a test in a child process, so that code
// that crashes the process — a panic on a goroutine of its own that
// nothing recovers, a fatal error (a negative WaitGroup counter, a
// concurrent map write), os.Exit — ends the child, not the test binary.
//
// The child is the test binary itself, re-run with -test.run selecting
// the one test (Pattern) and the environment naming a log file (EnvLog),
// the call of the test it is to run (EnvCall: Calls numbers the calls of
// each test) and what its parent already knows (EnvSeen). The child
// appends JSON records to the log (Log: one write per record, so a crash
// keeps every record written before it); the parent runs it (Run: its
// output bounded to the last bytes, where a crash is printed), reads the
// records back (Read: a line cut by the crash ends them), and, when the
// child died, describes the crash from its output (ParseCrash: the first
// line of the panic or fatal error, the crashing goroutine's stack, and
// Site, the first function on it that is not the runtime's, sync's or
// the controlled runtime's).
//
// The package knows nothing of what the records say: properties/pool
// writes one per case and decides where a new child goes on from.
package isolate
