package model

import "fmt"

// Variant selects a deliberately broken version of one rule, so that the
// checkers can be shown to catch the bug. The zero Variant is the correct
// model.
type Variant string

// The broken variants. Each models a bug real executors have had.
const (
	Correct Variant = ""
	// LostWakeup: a WAKE that arrives while the task is RUNNING is dropped
	// instead of marking it NOTIFIED.
	LostWakeup Variant = "lost-wakeup"
	// DuplicateEnqueue: WAKE is not idempotent: waking a QUEUED task pushes
	// it again.
	DuplicateEnqueue Variant = "duplicate-enqueue"
	// EnqueueWhileRunning: a WAKE on a RUNNING task pushes it at once, while
	// its poll is still running.
	EnqueueWhileRunning Variant = "enqueue-while-running"
	// StealOwnerEnd: a thief takes from the owner's end of the victim's deque
	// in two steps, reading the task and then removing it, without the
	// compare-and-swap that would make it fail when the owner took the same
	// task in between.
	StealOwnerEnd Variant = "steal-owner-end"
	// OverflowDrop: a push onto a full local deque drops the task instead of
	// moving it to the global queue.
	OverflowDrop Variant = "overflow-drop"
	// NoAging: the priority policy without aging: a low-priority task can
	// wait forever.
	NoAging Variant = "no-aging"
)

// VariantInfo declares a variant: its name, the bug, and the rule it breaks.
type VariantInfo struct {
	Variant Variant
	Rule    Rule
	Bug     string
}

// Variants declares every broken variant.
var Variants = []VariantInfo{
	{LostWakeup, WAKE, "a wake that arrives while the task is RUNNING is dropped (the NOTIFIED state is missing)"},
	{DuplicateEnqueue, WAKE, "waking a QUEUED task pushes it a second time (wake is not idempotent)"},
	{EnqueueWhileRunning, WAKE, "waking a RUNNING task queues it while its poll is still running"},
	{StealOwnerEnd, WORKER_STEAL, "a thief takes from the owner's end of the deque without a compare-and-swap"},
	{OverflowDrop, SPAWN, "a push onto a full local deque drops the task instead of overflowing to the global queue"},
	{NoAging, GLOBAL_STEAL, "priority scheduling without aging: a low-priority task can starve"},
}

// ParseVariant returns the variant with the given name; "" and "correct" are
// the correct model.
func ParseVariant(name string) (Variant, error) {
	if name == "" || name == "correct" || name == "none" {
		return Correct, nil
	}
	for _, v := range Variants {
		if string(v.Variant) == name {
			return v.Variant, nil
		}
	}
	return "", fmt.Errorf("unknown variant %q", name)
}

func (v Variant) valid() bool {
	_, err := ParseVariant(string(v))
	return err == nil
}

func (v Variant) String() string {
	if v == Correct {
		return "correct"
	}
	return string(v)
}

// WakeEffect returns what a WAKE of task t did, from the state before it
// to the state after it, in the words an executor reports it with
// (traces' outcomes): "scheduled" when t was pushed onto a queue, "dropped"
// when the wake of a RUNNING or WAITING task did nothing, else what
// WakeOutcome says of before. Under the correct model it equals
// WakeOutcome(before, t); under a broken variant it is what the broken
// rule did — a lost wake is "dropped", a push of a RUNNING or QUEUED task
// "scheduled" — so that a counterexample written as a trace departs from
// the rules at the very event where the variant does.
func WakeEffect(before, after *State, t int) string {
	if before == nil || after == nil || t < 1 || t > len(before.Task) || t > len(after.Task) {
		return "none"
	}
	b, a := before.Task[t-1], after.Task[t-1]
	switch {
	case after.queued(int32(t)) > before.queued(int32(t)):
		return "scheduled"
	case b == Running && a == Running, b == Waiting && a == Waiting:
		return "dropped"
	case b == Waiting && a == Queued:
		// WAITING → QUEUED onto no queue: the overflow-drop variant lost
		// the push, not the wake; the event says where it was meant to go.
		return "scheduled"
	}
	return WakeOutcome(before, t)
}

// queued counts the copies of t in the queues of s.
func (s *State) queued(t int32) int {
	n := 0
	for _, u := range s.Global {
		if u == t {
			n++
		}
	}
	for _, q := range s.Local {
		for _, u := range q {
			if u == t {
				n++
			}
		}
	}
	return n
}
