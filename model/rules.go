package model

import "fmt"

// Global is the destination of a push onto the global queue (Step.Dest).
const Global = -1

// Step is one instance of a rule: who acts, on which task, and the choices
// the rule leaves open (where a wake pushes, which victim a thief robs).
type Step struct {
	Rule   Rule
	Worker int // the acting worker; -1 for SPAWN and WAKE from outside
	Task   int // the task, from 1
	Victim int // WORKER-STEAL: the robbed worker; else -1
	Dest   int // SPAWN, WAKE: Global or the worker whose local queue receives the task; else -1

	// Failed marks a TASK-COMPLETE whose future failed (retry policy).
	Failed bool
	// Repoll marks a TASK-SUSPEND after which the worker polls the task
	// again at once (time-slice policy).
	Repoll bool
	// Read marks the first half of a two-step steal (StealOwnerEnd only).
	Read bool
	// Slot marks a POLL-LOCAL that takes from the global queue because the
	// worker's global-check interval came round.
	Slot bool
}

// Proc returns the process that takes the step, for fairness: 0 the
// spawner, 1+w worker w, 1+W+(t-1) the event source of task t.
func (st Step) Proc(workers int) int {
	switch st.Rule {
	case SPAWN:
		return 0
	case WAKE:
		return 1 + workers + st.Task - 1
	default:
		return 1 + st.Worker
	}
}

// String prints the step as counterexamples show it, e.g.
// "WORKER-STEAL w1 takes t3 from w0".
func (st Step) String() string {
	switch st.Rule {
	case SPAWN:
		return fmt.Sprintf("SPAWN t%d onto %s", st.Task, destString(st.Dest))
	case POLL_LOCAL:
		return fmt.Sprintf("POLL-LOCAL w%d takes t%d", st.Worker, st.Task)
	case GLOBAL_STEAL:
		if st.Slot {
			return fmt.Sprintf("GLOBAL-STEAL w%d takes t%d (global check interval)", st.Worker, st.Task)
		}
		return fmt.Sprintf("GLOBAL-STEAL w%d takes t%d", st.Worker, st.Task)
	case WORKER_STEAL:
		if st.Read {
			return fmt.Sprintf("WORKER-STEAL w%d reads t%d at the owner end of w%d", st.Worker, st.Task, st.Victim)
		}
		return fmt.Sprintf("WORKER-STEAL w%d takes t%d from w%d", st.Worker, st.Task, st.Victim)
	case POLL_PENDING:
		return fmt.Sprintf("POLL-PENDING w%d: t%d registers its waker", st.Worker, st.Task)
	case TASK_SUSPEND:
		if st.Repoll {
			return fmt.Sprintf("TASK-SUSPEND w%d: t%d was woken, polled again in its slice", st.Worker, st.Task)
		}
		return fmt.Sprintf("TASK-SUSPEND w%d: t%d returns Pending", st.Worker, st.Task)
	case TASK_COMPLETE:
		if st.Failed {
			return fmt.Sprintf("TASK-COMPLETE w%d: t%d fails", st.Worker, st.Task)
		}
		return fmt.Sprintf("TASK-COMPLETE w%d: t%d returns Ready", st.Worker, st.Task)
	case WAKE:
		return fmt.Sprintf("WAKE t%d (to %s)", st.Task, destString(st.Dest))
	}
	return st.Rule.String()
}

func destString(d int) string {
	if d < 0 {
		return "global"
	}
	return fmt.Sprintf("w%d", d)
}

// PremiseError says which premise of a rule failed.
type PremiseError struct {
	Step    Step
	Premise string // the formal premise, e.g. "local(w) = ∅"
	Reason  string // what held instead, e.g. "worker 2's local queue holds t17"
}

func (e *PremiseError) Error() string {
	return fmt.Sprintf("%s: premise %s fails: %s", e.Step.Rule, e.Premise, e.Reason)
}

func premise(st Step, p, format string, args ...any) error {
	return &PremiseError{Step: st, Premise: p, Reason: fmt.Sprintf(format, args...)}
}
