// Package shrink is how the pool suite makes a failing case smaller when
// a race does not repeat on demand: Greedy takes the first smaller
// candidate that still shows the defect (the boldest first) and starts
// again from it, within a deadline; Cuts lists the spans of a sequence to
// drop, a half first, then quarters, eighths, ..., single elements, so
// that a case of hundreds of operations comes down in a few runs per
// halving. Under control the schedule shrinks too: Guided replays a
// failing schedule's choices on a smaller case, and Preemptions brings
// the kept schedule towards no preemptions. Whether a candidate shows the
// defect is the caller's to say (some runs of it in stress mode, some
// schedules under control).
package shrink
