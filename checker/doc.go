// Package checker holds the engines that check executors against the model:
// explicit-state model checking of model/, trace conformance (every observed
// event must be an enabled rule), and linearizability of recorded histories.
//
// Every engine returns a three-valued Verdict: Holds, Violated (with a
// counterexample), or Unknown when a budget was spent first.
package checker
