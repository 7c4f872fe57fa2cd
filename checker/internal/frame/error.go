package frame

import (
	"fmt"
	"strings"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Error is the first event of a trace that is not an enabled
// rule of the model.
type Error struct {
	Index   int          // position of the event in the trace, from 0
	Event   traces.Event // the event
	Rule    model.Rule   // the rule it maps onto; 0 for an event that is no rule (poll-begin, requeue, a malformed event)
	Premise string       // the premise that failed, e.g. "local(w) = ∅"
	Reason  string       // what held instead, e.g. "w2's local queue holds [t17]"
	State   string       // the model state (lanes) when the premise was evaluated
	Before  []traces.Event
	Msg     string // the whole message, as Error returns it
	// Limit, when not empty, names a capacity limit of the checker that
	// the event exceeds (such as MaxTask): the checker cannot say
	// whether the event is an enabled rule, so the verdict is Unknown, not
	// Violated. The executor is not at fault.
	Limit string
}

// Error returns e.g. "event 1832 (seq 4410): WORKER-STEAL by worker 2 of
// task 9 from worker 0, but w2's local queue holds [t17] (premise local(w) =
// ∅ fails)". Events are counted from 1 in the message.
func (e *Error) Error() string { return e.Msg }

// LostWake reports whether e is a wake lost during a poll: a NOTIFIED
// task's poll returned Pending and the executor never queued it again, as
// a later take or wake showed. The rule is TASK-SUSPEND; the defect is the
// one a lost-wakeup check sees from outside.
func (e *Error) LostWake() bool {
	return e.Rule == model.TASK_SUSPEND && e.Premise == LostSuspendPremise
}

// Finding is something a trace shows that is not a violation of a
// rule: a task's panic, or a warning.
type Finding struct {
	Index  int    // position of the event in the trace, from 0
	Seq    uint64 // its Seq
	Task   int64  // 0 if none
	Worker int    // -1 if none
	Msg    string
}

func (f Finding) String() string {
	return fmt.Sprintf("event %d (seq %d): %s", f.Index+1, f.Seq, f.Msg)
}

// LostSuspendPremise is the premise a lost re-queue breaks: the Premise
// of an Error for which LostWake is true.
const LostSuspendPremise = "TASK-SUSPEND of a NOTIFIED task re-queues it (the wake during the poll is not lost)"

// PremiseWellFormed is the premise of an Error about an event's form, not
// a rule: a field the header or the format rules out (a take when takes
// are unobserved, a poll without the time that slice-us needs, seq out of
// order). A command reports it as bad input rather than as a violation by
// the executor.
const PremiseWellFormed = "a well-formed event"

// Rule is the rule an event maps onto, for messages; 0 if none.
func Rule(e *traces.Event) model.Rule {
	switch e.Kind {
	case traces.KindSpawn:
		return model.SPAWN
	case traces.KindTake:
		switch e.Source {
		case traces.SourceGlobal:
			return model.GLOBAL_STEAL
		case traces.SourceSteal:
			return model.WORKER_STEAL
		case traces.SourceLocal, traces.SourceLIFO:
			return model.POLL_LOCAL
		}
	case traces.KindPollEnd:
		if e.Result == traces.ResultPending {
			return model.TASK_SUSPEND
		}
		if e.Result != traces.ResultNone {
			return model.TASK_COMPLETE
		}
	case traces.KindWake:
		return model.WAKE
	case traces.KindStep:
		return e.Rule
	case traces.KindRegister:
		return model.POLL_PENDING
	}
	return 0
}

// TakeRule maps a take's source onto its rule.
func TakeRule(src traces.Source) model.Rule {
	switch src {
	case traces.SourceGlobal:
		return model.GLOBAL_STEAL
	case traces.SourceSteal:
		return model.WORKER_STEAL
	}
	return model.POLL_LOCAL
}

// Who names the actor of an event: a worker, or a thread outside them.
func Who(w int) string {
	if w < 0 {
		return "a thread outside the workers"
	}
	return fmt.Sprintf("worker %d", w)
}

// firstLine returns a copy of the first line of s, so that a finding does
// not keep a whole stack alive.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.Clone(s)
}

// Describe says what an event claims, in the words of its rule.
func Describe(e *traces.Event, r model.Rule) string {
	if r == 0 {
		r = Rule(e)
	}
	switch e.Kind {
	case traces.KindSpawn:
		return fmt.Sprintf("SPAWN of task %d onto %s by %s", e.Task, e.Queue, Who(int(e.Worker)))
	case traces.KindTake:
		s := fmt.Sprintf("%s by worker %d of task %d", r, e.Worker, e.Task)
		if e.Source == traces.SourceSteal {
			s += fmt.Sprintf(" from worker %d", e.Victim)
		}
		if e.Source == traces.SourceLIFO {
			s += " from its LIFO slot"
		}
		return s
	case traces.KindPollBegin:
		return fmt.Sprintf("poll-begin of task %d on worker %d", e.Task, e.Worker)
	case traces.KindPollEnd:
		if r == 0 {
			return fmt.Sprintf("poll-end (%s) of task %d on worker %d", e.Result, e.Task, e.Worker)
		}
		return fmt.Sprintf("%s (poll-end %s) of task %d on worker %d", r, e.Result, e.Task, e.Worker)
	case traces.KindWake:
		s := fmt.Sprintf("WAKE of task %d by %s, reported %s", e.Task, Who(int(e.Worker)), e.Outcome)
		if e.Queue != traces.QueueNone {
			s += " onto " + e.Queue.String()
		}
		return s
	case traces.KindRequeue:
		return fmt.Sprintf("requeue of task %d onto %s by %s", e.Task, e.Queue, Who(int(e.Worker)))
	case traces.KindStep:
		return fmt.Sprintf("step %s of task %d by %s", e.Rule, e.Task, Who(int(e.Worker)))
	}
	if e.Task != 0 {
		return fmt.Sprintf("%s of task %d by %s", e.Kind, e.Task, Who(int(e.Worker)))
	}
	return fmt.Sprintf("%s by %s", e.Kind, Who(int(e.Worker)))
}

// ConfigKeys are the header config keys the trace checkers (conformance
// and partial) understand. "tasks" and "pendings" describe the workload of a model checker's counterexample
// (HeaderOf); a trace shows its tasks and their results itself, so they are
// accepted and not used.
var ConfigKeys = []string{"local-cap", "owner-lifo", "steal-half", "steal-last", "steal-max", "global-interval", "lifo-slot", "lifo-max", "aging", "max-priority", "slice", "retries", "tasks", "pendings", "spurious-polls", "slice-us"}
