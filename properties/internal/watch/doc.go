// Package watch is the property suite's watcher of a black-box case: a
// case that runs on the Go scheduler, on the executor's own goroutines,
// where a hang is not a fact anyone reports but an absence of progress.
// Case waits until the case is done, shows a violation, or makes no
// progress for the idle time while the watcher itself ran on time (a
// loaded machine does not raise false alarms); Stacks is every
// goroutine's stack when a hang is called.
package watch
