// Package checker holds what every engine that checks executors against
// the model shares: the three-valued Verdict. The engines themselves have a
// package each below this one:
//
//   - checker/explore: explicit-state model checking of package model — every
//     state of a closed configuration, safety and liveness under weak
//     fairness, bitstate and swarm searches beyond memory;
//   - checker/conform: trace conformance — a fully observed recorded trace
//     replayed through the open model of its policy;
//   - checker/partial: a partially observed trace — the premises its
//     events decide, and the model replay (conform) when its queues are
//     observed;
//   - checker/lin: linearizability of a recorded history (porcupine);
//   - checker/cover: spec coverage — which states and transitions of the
//     closed model recorded runs went through;
//   - checker/gotrace: the Go scheduler's goroutine lifecycle and fairness,
//     from a Go runtime trace.
//
// Imports go one way: partial uses conform, and both share their
// streaming frame (checker/internal/frame); cover uses conform (and
// explore in its tests), explore uses conform (to diagnose a
// counterexample); lin and gotrace use neither, and none of them uses cmd/ or properties/ (only conform's tests
// drive executors through properties/control).
//
// # Verdicts
//
// Every engine returns Holds, Violated (with a counterexample or the event
// that broke a rule), or Unknown. Unknown is never reported as Holds: it
// means a budget was spent first (states, memory, time), the run was
// interrupted, or the input reached a limit of the checker, and it always
// comes with its reason in the engine's result (explore.Result.Message,
// conform.Error.Limit, lin.SpecCheck.Detail, ...). A limit of a checker (a
// task id beyond conform.MaxTask, a history longer than
// lin.Options.MaxEvents) is Unknown with the limit named, never Violated:
// the executor is not at fault. The zero Verdict is Unknown, so a result
// that was never filled in claims nothing.
package checker
