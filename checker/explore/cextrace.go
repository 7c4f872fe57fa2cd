package explore

import (
	"fmt"
	"strings"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// HeaderOf returns the trace header for a model configuration: the policy
// and its parameters, so that a counterexample, written as a trace, can be
// checked and replayed like a recorded one.
func HeaderOf(c model.Config) traces.Header {
	n := c.Normalized()
	// The workload (tasks, futures) and the variant go in the executor's
	// name: the policy's parameters are what a trace is checked against.
	name := fmt.Sprintf("model tasks=%d", n.Tasks)
	if n.Endless {
		name += " endless"
	} else {
		name += fmt.Sprintf(" pendings=%d", n.Pendings)
	}
	if n.Variant != model.Correct {
		name += " variant=" + string(n.Variant)
	}
	h := traces.Header{
		Format:   traces.Format,
		Version:  traces.Version,
		Executor: name,
		Workers:  n.Workers,
		Policy:   string(n.Policy),
		Config:   map[string]int{},
	}
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	if n.Policy == model.WorkSteal {
		h.Config["local-cap"] = n.LocalCap
		h.Config["owner-lifo"] = b(!n.OwnerFIFO)
		h.Config["steal-half"] = b(n.StealHalf)
		if n.GlobalInterval > 0 {
			h.Config["global-interval"] = n.GlobalInterval
		}
	}
	if n.Policy == model.Priority {
		h.Config["aging"] = n.Aging
	}
	if n.Slice > 0 {
		h.Config["slice"] = n.Slice
	}
	if n.Retries > 0 {
		h.Config["retries"] = n.Retries
	}
	return h
}

// Events returns the counterexample as trace events, one per step, each
// naming its rule and carrying the state after it in Detail, so that step k
// of the counterexample is event k of its trace in every view (the model's
// table, check, replay, the timeline) — except after a TASK-SUSPEND of a
// NOTIFIED task, which is written as its poll-end and a second event that
// says how the poll ended: the requeue (with its queue), or under a time
// slice the poll-begin of the re-poll. StepEvents maps steps to events. A broken
// variant's step is written as what the broken rule did (model.WakeEffect:
// a lost wake is "dropped"), so its trace departs from the rules where the
// variant does. The loop of a lasso is marked in the Detail of its first
// event.
func (cx *Counterexample) Events() []traces.Event {
	ev, _ := cx.StepEvents()
	return ev
}

// StepEvents returns Events and, for each step k, the index in them of the
// step's event.
func (cx *Counterexample) StepEvents() ([]traces.Event, []int) {
	var out []traces.Event
	at := make([]int, len(cx.Steps))
	seq := uint64(0)
	emit := func(e traces.Event, s *model.State, note string) {
		seq++
		e.Seq = seq
		if s != nil {
			e.Detail = compactState(s)
		}
		if note != "" {
			e.Detail = note + "; " + e.Detail
		}
		out = append(out, e)
	}
	prev := cx.Init
	for k, cs := range cx.Steps {
		st := cs.Step
		at[k] = len(out)
		note := ""
		if k == cx.Loop {
			note = "loop: the steps from here repeat forever"
		}
		base := traces.Event{Task: int64(st.Task), Worker: int32(st.Worker), Victim: -1, Rule: st.Rule}
		switch st.Rule {
		case model.SPAWN:
			base.Kind = traces.KindSpawn
			base.Queue = placedQueue(cs.State, st.Task, st.Dest)
			emit(base, cs.State, note)
		case model.POLL_LOCAL, model.GLOBAL_STEAL, model.WORKER_STEAL:
			if st.Read {
				// A look at the victim's queue, not a take: the step's
				// queue says so (Conformance applies no rule).
				base.Kind = traces.KindStep
				base.Victim = int32(st.Victim)
				base.Queue = traces.LocalQueue(st.Victim)
				emit(base, cs.State, joinNote(note, fmt.Sprintf("w%d reads t%d at the owner end of w%d", st.Worker, st.Task, st.Victim)))
				break
			}
			base.Kind = traces.KindTake
			switch st.Rule {
			case model.POLL_LOCAL:
				base.Source = traces.SourceLocal
			case model.GLOBAL_STEAL:
				base.Source = traces.SourceGlobal
			default:
				base.Source = traces.SourceSteal
				base.Victim = int32(st.Victim)
			}
			// The take starts the poll: no poll-begin, so that one step is
			// one event.
			emit(base, cs.State, note)
		case model.POLL_PENDING:
			base.Kind = traces.KindStep
			emit(base, cs.State, note)
		case model.TASK_SUSPEND:
			base.Kind = traces.KindPollEnd
			base.Result = traces.ResultPending
			emit(base, cs.State, note)
			// The end of a NOTIFIED task's poll is said by a second event:
			// where it was re-queued, or, under a time slice, the
			// poll-begin of its re-poll.
			switch {
			case st.Repoll:
				emit(traces.Event{Kind: traces.KindPollBegin, Task: base.Task, Worker: base.Worker, Victim: -1}, nil, "")
			case prev != nil && prev.Task[st.Task-1] == model.Notified:
				emit(traces.Event{Kind: traces.KindRequeue, Task: base.Task, Worker: base.Worker, Victim: -1, Queue: placedQueue(cs.State, st.Task, st.Worker)}, nil, "")
			}
		case model.TASK_COMPLETE:
			base.Kind = traces.KindPollEnd
			base.Result = traces.ResultReady
			if st.Failed {
				base.Result = traces.ResultPanic
			}
			emit(base, cs.State, note)
			if st.Failed && cs.State != nil && cs.State.Task[st.Task-1] == model.Queued {
				// Re-run from a fresh future: re-queued, as a retrying
				// executor records it.
				emit(traces.Event{Kind: traces.KindRequeue, Task: base.Task, Worker: base.Worker, Victim: -1, Queue: traces.QueueGlobal}, nil, "")
			}
		case model.WAKE:
			base.Kind = traces.KindWake
			base.Worker = -1
			if prev != nil {
				// WakeEffect names the outcome as the trace format does
				// ("none" when there is none).
				base.Outcome, _ = traces.ParseOutcome(model.WakeEffect(prev, cs.State, st.Task))
				if base.Outcome == traces.OutcomeScheduled {
					base.Queue = placedQueue(cs.State, st.Task, st.Dest)
				}
			}
			if st.Dest >= 0 {
				base.Worker = int32(st.Dest) // a wake on worker d's thread
			}
			emit(base, cs.State, note)
		}
		if cs.State != nil {
			prev = cs.State
		}
	}
	return out, at
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func queueOf(dest int) traces.Queue {
	if dest < 0 {
		return traces.QueueGlobal
	}
	return traces.LocalQueue(dest)
}

// placedQueue says where a push of task t towards dest went: dest's local
// queue, or the global queue when it was full (overflow) or the policy has
// none. A task in no queue (a variant that drops it) is reported where it
// was meant to go, as the executor with that bug would report it.
func placedQueue(s *model.State, t, dest int) traces.Queue {
	if s == nil || dest < 0 {
		return queueOf(dest)
	}
	for _, u := range s.Local[dest] {
		if int(u) == t {
			return traces.LocalQueue(dest)
		}
	}
	for _, u := range s.Global {
		if int(u) == t {
			return traces.QueueGlobal
		}
	}
	return queueOf(dest)
}

// compactState prints a state on one line, for a trace's Detail.
func compactState(s *model.State) string {
	return strings.ReplaceAll(s.String(), "\n", " | ")
}
