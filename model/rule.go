package model

import "fmt"

// Rule names one transition of the executor semantics. The names are the
// project's vocabulary: they appear unchanged in code, traces, command output
// and counterexamples.
type Rule uint8

// The rules, in the order DESIGN.md states them. The zero Rule is not a rule.
const (
	// SPAWN: a task not yet spawned becomes QUEUED, pushed on the global
	// queue (or on worker w's local queue when spawned from a task on w).
	SPAWN Rule = iota + 1
	// POLL-LOCAL: worker w is idle and local(w) ≠ ∅: pop the owner end of
	// local(w); the task is RUNNING(w).
	POLL_LOCAL
	// GLOBAL-STEAL: w idle, local(w) = ∅, global ≠ ∅: pop the head of the
	// global queue; RUNNING(w).
	GLOBAL_STEAL
	// WORKER-STEAL: w idle, local(w) = ∅, global = ∅, local(v) ≠ ∅ for some
	// v ≠ w: take from the steal end of local(v); RUNNING(w).
	WORKER_STEAL
	// POLL-PENDING: a RUNNING future that is not finished registers its
	// waker; the poll has not returned yet, so a wake can arrive now.
	POLL_PENDING
	// TASK-SUSPEND: the poll returns Pending: WAITING, or QUEUED again on
	// the polling worker's local queue if it was NOTIFIED during the poll.
	TASK_SUSPEND
	// TASK-COMPLETE: the future returns Ready: DONE, the worker is idle, and
	// the task is never polled again.
	TASK_COMPLETE
	// WAKE: the task's waker is called: WAITING → QUEUED, RUNNING →
	// NOTIFIED; QUEUED, NOTIFIED and DONE are left as they are.
	WAKE
)

// NumRules is one more than the largest Rule, for tables indexed by Rule.
const NumRules = int(WAKE) + 1

var ruleNames = [NumRules]string{
	SPAWN:         "SPAWN",
	POLL_LOCAL:    "POLL-LOCAL",
	GLOBAL_STEAL:  "GLOBAL-STEAL",
	WORKER_STEAL:  "WORKER-STEAL",
	POLL_PENDING:  "POLL-PENDING",
	TASK_SUSPEND:  "TASK-SUSPEND",
	TASK_COMPLETE: "TASK-COMPLETE",
	WAKE:          "WAKE",
}

// Rules lists every rule in order.
var Rules = []Rule{SPAWN, POLL_LOCAL, GLOBAL_STEAL, WORKER_STEAL, POLL_PENDING, TASK_SUSPEND, TASK_COMPLETE, WAKE}

// String returns the rule's name as DESIGN.md spells it, e.g. "POLL-LOCAL".
func (r Rule) String() string {
	if int(r) < NumRules && r != 0 {
		return ruleNames[r]
	}
	return fmt.Sprintf("Rule(%d)", uint8(r))
}

// ParseRule returns the rule with the given name ("WORKER-STEAL").
func ParseRule(name string) (Rule, error) {
	for _, r := range Rules {
		if ruleNames[r] == name {
			return r, nil
		}
	}
	return 0, fmt.Errorf("unknown rule %q (want one of SPAWN, POLL-LOCAL, GLOBAL-STEAL, WORKER-STEAL, POLL-PENDING, TASK-SUSPEND, TASK-COMPLETE, WAKE)", name)
}

// MarshalText implements encoding.TextMarshaler.
func (r Rule) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Rule) UnmarshalText(b []byte) error {
	v, err := ParseRule(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// TaskState is the state of one task. The zero value is Idle.
type TaskState uint8

// Task states (DESIGN.md §1).
const (
	Idle     TaskState = iota // not spawned
	Queued                    // in exactly one queue
	Running                   // being polled by one worker
	Waiting                   // Pending returned, waker registered
	Notified                  // woken while Running: re-queued when the poll returns
	Done                      // finished; never polled again
)

var stateNames = [...]string{"IDLE", "QUEUED", "RUNNING", "WAITING", "NOTIFIED", "DONE"}

func (s TaskState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("TaskState(%d)", uint8(s))
}
