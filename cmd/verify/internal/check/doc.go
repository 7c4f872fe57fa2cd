// Package check is verify check and verify replay: a recorded trace, JSON
// lines or the text form (docs/trace-format.md), read through the model.
//
// Check streams the trace through conform.Conformance, or partial.Checker
// when its header lists unobserved events (check_partial.go), or through
// gotrace for a Go runtime trace, and reports the first event that is not
// an enabled rule with its rule, premise, state and the events before it;
// it writes the --html timeline and the --chrome page while it reads
// (check_stream.go, check_timeline.go) and, with --linearizability, runs
// lin on the queue operations. Replay steps through the same trace a key
// at a time in a terminal (replay_step.go), or prints what each event
// changed.
package check
