// Package fair is the fairness measure of the property suite: what a
// case's executor is held to, and whether a ready task waited too long.
//
// What it needs: what the executor states (executor.Bounded: a bound in
// polls of other tasks; executor.BoundedWait: in time;
// executor.FairnessPromiser: no fairness promised; executor.Describer:
// its workers) or the bound the user set for it, and, from the case
// runner, every poll begun and ended by each worker and every moment a
// task became ready. What it returns: a Meter's Polled and Starving give
// the detail of a failure of the fairness check ("" or not violated when
// the wait was within the bound), and its counters the figures (the most
// polls of others between ready and poll, the least busy worker's share,
// the longest wait) reported whether or not the check failed.
//
// Polls of others count per worker: a wait counts against the executor
// only as far as the least busy worker went on polling other tasks (a
// worker the operating system stopped may hold the ready task); fair.go
// says why, and why the default bound is 1,000 polls and 1 s.
package fair
