// Package sched holds what a controller of goroutines needs to choose and
// record schedules: the Strategy interface with its Decision and Choice,
// the strategies Random, PCT and Replay, and the Schedule with its text
// form and checksum. It imports only the standard library, so that the
// controlled runtime linked into instrumented tests (instrument/rt) stays
// light; properties/control, the controller of the built-in executors,
// names the same types (as aliases) and adds the strategies drawn from
// rapid.
package sched
