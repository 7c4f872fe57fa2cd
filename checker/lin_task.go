package checker

import (
	"fmt"

	"github.com/anishathalye/porcupine"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// linTaskOpKind is what one operation of a task's lifecycle did.
type linTaskOpKind uint8

const (
	linSpawn     linTaskOpKind = iota + 1 // SPAWN
	linTake                               // POLL-LOCAL, GLOBAL-STEAL or WORKER-STEAL
	linPollBegin                          // the poll starts
	linPollEnd                            // TASK-SUSPEND or TASK-COMPLETE, with its re-queue if any
	linWake                               // WAKE, with its outcome as output
	linRequeue                            // a re-queue with no poll end to pair it with
	linEnd                                // synthetic: the run finished, the task must be DONE
)

var linTaskOpNames = [...]string{"?", "spawn", "take", "poll-begin", "poll-end", "wake", "requeue", "end"}

// linTaskIn is the porcupine input of a lifecycle operation.
type linTaskIn struct {
	kind     linTaskOpKind
	task     int64
	worker   int32
	source   traces.Source
	victim   int32
	result   traces.Result
	requeued bool // poll end: the task was re-queued as it returned
	open     bool // poll end of a cut run, its re-queue not seen: the state decides
	outcome  traces.Outcome
	seq      uint64
}

// linTaskState is one task's state: its model state, the worker that took
// it, and whether a poll is under way. A comparable value, so porcupine's
// == works.
type linTaskState struct {
	st      model.TaskState
	worker  int32
	polling bool
}

// linPolicy holds what the policy allows beyond the base rules.
type linPolicy struct {
	begins    bool // the trace records poll begins: a poll end needs one
	timeslice bool // a task may be re-polled within its slice without a queue
}

// linTaskStep is the sequential specification of one task: the rules of
// DESIGN.md §1 restricted to one task (SPAWN, the three takes, TASK-SUSPEND,
// TASK-COMPLETE, WAKE), as transitions of model.TaskState. The lifecycle
// itself is model.TaskState's; the step is written here against it.
func linTaskStep(pol linPolicy, s linTaskState, in linTaskIn) (bool, linTaskState) {
	switch in.kind {
	case linSpawn: // SPAWN: IDLE → QUEUED
		if s.st != model.Idle {
			return false, s
		}
		return true, linTaskState{st: model.Queued}
	case linTake: // POLL-LOCAL, GLOBAL-STEAL, WORKER-STEAL: QUEUED → RUNNING(w)
		if s.st != model.Queued {
			return false, s
		}
		return true, linTaskState{st: model.Running, worker: in.worker}
	case linPollBegin: // a poll of a task this worker took, not already polling
		if (s.st != model.Running && s.st != model.Notified) || s.worker != in.worker || s.polling {
			return false, s
		}
		s.polling = true
		return true, s
	case linPollEnd:
		if (s.st != model.Running && s.st != model.Notified) || s.worker != in.worker {
			return false, s
		}
		if pol.begins && !s.polling {
			return false, s
		}
		switch in.result {
		case traces.ResultReady: // TASK-COMPLETE: DONE, never polled again
			if in.requeued {
				return false, s
			}
			return true, linTaskState{st: model.Done}
		case traces.ResultPanic: // a failed task is DONE, or re-run afresh by a retry policy
			if in.requeued {
				return true, linTaskState{st: model.Queued}
			}
			return true, linTaskState{st: model.Done}
		case traces.ResultPending: // TASK-SUSPEND
			if in.open {
				// The run was cut before the re-queue could be
				// recorded: the state decides, as in the rule.
				if s.st == model.Notified {
					return true, linTaskState{st: model.Queued}
				}
				return true, linTaskState{st: model.Waiting}
			}
			switch {
			case s.st == model.Notified && in.requeued:
				return true, linTaskState{st: model.Queued}
			case s.st == model.Notified && pol.timeslice:
				// Re-polled within its slice by the same worker.
				return true, linTaskState{st: model.Running, worker: s.worker}
			case s.st == model.Notified:
				return false, s // the wake would be lost
			case in.requeued && pol.timeslice:
				return true, linTaskState{st: model.Queued} // slice over, re-queued
			case in.requeued:
				return false, s // re-queued without a wake
			}
			return true, linTaskState{st: model.Waiting}
		}
		return false, s
	case linWake: // WAKE
		var next linTaskState
		var out traces.Outcome
		switch s.st {
		case model.Waiting:
			next, out = linTaskState{st: model.Queued}, traces.OutcomeScheduled
		case model.Running:
			next, out = s, traces.OutcomeNotified
			next.st = model.Notified
		case model.Queued, model.Notified:
			next, out = s, traces.OutcomeCoalesced
		case model.Done:
			next, out = s, traces.OutcomeLate
		default:
			return false, s // a wake of a task never spawned
		}
		if in.outcome != traces.OutcomeNone && in.outcome != out {
			return false, s
		}
		return true, next
	case linRequeue:
		// A re-queue not paired with a poll end: only a policy that
		// re-queues running tasks by itself may do it.
		if !pol.timeslice || (s.st != model.Running && s.st != model.Notified) {
			return false, s
		}
		return true, linTaskState{st: model.Queued}
	case linEnd:
		return s.st == model.Done, s
	}
	return false, s
}

func (in linTaskIn) String() string {
	name := "?"
	if int(in.kind) < len(linTaskOpNames) {
		name = linTaskOpNames[in.kind]
	}
	s := fmt.Sprintf("%s(task %d", name, in.task)
	if in.kind != linEnd {
		if in.worker >= 0 {
			s += fmt.Sprintf(", worker %d", in.worker)
		} else {
			s += ", outside"
		}
	}
	switch in.kind {
	case linTake:
		s += ", " + linSourceName(in.source)
		if in.source == traces.SourceSteal {
			s += fmt.Sprintf(" from worker %d", in.victim)
		}
	case linPollEnd:
		s += ", " + linResultName(in.result)
		if in.requeued {
			s += ", re-queued"
		}
		if in.open {
			s += ", cut"
		}
	case linWake:
		if in.outcome != traces.OutcomeNone {
			s += " → " + linOutcomeName(in.outcome)
		}
	}
	s += ")"
	if in.seq != 0 {
		s += fmt.Sprintf(" [event %d]", in.seq)
	}
	return s
}

func linSourceName(s traces.Source) string {
	switch s {
	case traces.SourceLocal:
		return model.POLL_LOCAL.String()
	case traces.SourceLIFO:
		return model.POLL_LOCAL.String() + " (LIFO slot)"
	case traces.SourceGlobal:
		return model.GLOBAL_STEAL.String()
	case traces.SourceSteal:
		return model.WORKER_STEAL.String()
	}
	return "no source"
}

func linResultName(r traces.Result) string {
	switch r {
	case traces.ResultPending:
		return "Pending"
	case traces.ResultReady:
		return "Ready"
	case traces.ResultPanic:
		return "panic"
	}
	return "no result"
}

func linOutcomeName(o traces.Outcome) string {
	switch o {
	case traces.OutcomeScheduled:
		return "scheduled"
	case traces.OutcomeNotified:
		return "notified"
	case traces.OutcomeCoalesced:
		return "coalesced"
	case traces.OutcomeLate:
		return "late"
	}
	return "none"
}

func (s linTaskState) String() string {
	switch s.st {
	case model.Running, model.Notified:
		p := ""
		if s.polling {
			p = ", polling"
		}
		return fmt.Sprintf("%s(worker %d%s)", s.st, s.worker, p)
	}
	return s.st.String()
}

func linTaskModel(pol linPolicy) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return linTaskState{} },
		Step: func(st, in, _ any) (bool, any) {
			return linTaskStep(pol, st.(linTaskState), in.(linTaskIn))
		},
		Hash: func(st any) uint64 {
			s := st.(linTaskState)
			h := uint64(s.st)<<40 | uint64(uint32(s.worker))<<1
			if s.polling {
				h |= 1
			}
			return h
		},
		DescribeOperation: func(in, _ any) string { return in.(linTaskIn).String() },
		DescribeState:     func(st any) string { return st.(linTaskState).String() },
	}
}
