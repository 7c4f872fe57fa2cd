// Package modelcheck is verify model and verify merge: the rules
// model-checked by explore on every interleaving of a small configuration.
//
// Model prints each property's verdict, and a counterexample as numbered
// steps with a lane per worker, its root cause and its symptom
// (culprit.go), with its trace and timeline written. A search too large
// for every state runs as a bitstate search or a swarm of processes
// (model_scale.go); Merge combines the swarm's result files into one
// verdict. Default, what verify with no arguments runs, model-checks the
// work-stealing policy, shows every broken variant caught, and says what
// to try next.
package modelcheck
