package lin

import (
	"fmt"
	"sync"

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
	queue    traces.Queue // spawn, wake: where the task was pushed
	requeued bool         // poll end: the task was re-queued as it returned
	open     bool         // poll end of a cut run, its re-queue not seen: the state decides
	outcome  traces.Outcome
	seq      uint64
}

// linTaskState is one task's state, projected from model.State onto that
// task: its model state, the worker polling it, the model's per-task and
// per-worker counters that the rules read (failed attempts for retry, the
// re-polls of the current slice), and whether the executor reported the
// start of a poll. A comparable value, so porcupine's == works.
type linTaskState struct {
	st     model.TaskState
	worker int32 // the worker polling the task when RUNNING or NOTIFIED
	tries  uint8
	slice  uint8
	begun  bool // a poll begin was reported and its poll end not yet
}

// linPolicy holds the open model the lifecycle steps are taken in, and what
// the trace reports.
type linPolicy struct {
	m       *model.Model
	workers int
	begins  bool // the trace reports poll begins: a poll end needs one
	scratch *sync.Pool
}

// newLinPolicy builds the open model of the trace's policy. The projection
// keeps only what a single task's rules read, so settings that make a
// premise depend on other tasks (the global-check interval, priorities) are
// left out: their effect is checked by trace conformance, not here.
func newLinPolicy(h traces.Header, workers int) (linPolicy, error) {
	c := model.Config{Policy: model.Policy(h.Policy), Workers: max(workers, 1)}
	switch c.Policy {
	case "", "fifo", "wakeable", "monitored":
		c.Policy = model.FIFO
	case model.WorkSteal:
		c.LocalCap = 15 // the largest: a deque is never full in the projection (queues are checked apart)
	case model.TimeSlice:
		c.Slice = h.Config["slice"]
	case model.Retry:
		c.Retries = h.Config["retries"]
	case model.Priority:
	default:
		c.Policy = model.FIFO // an executor's own name: the lifecycle rules are the same
	}
	if c.Workers > model.MaxWorkers {
		c.Workers = model.MaxWorkers
	}
	m, err := model.NewOpen(c)
	if err != nil {
		return linPolicy{}, fmt.Errorf("lifecycle model: %w", err)
	}
	pol := linPolicy{m: m, workers: m.Config().Workers}
	pol.scratch = &sync.Pool{New: func() any { return m.Init() }}
	return pol, nil
}

// project builds the model state of s, with the task numbered 1 and placed
// in queue q (traces.QueueNone: no queue) when it is QUEUED.
func (pol linPolicy) project(s linTaskState, q traces.Queue) *model.State {
	ms := pol.scratch.Get().(*model.State)
	ms.Task = append(ms.Task[:0], s.st)
	ms.Pend = append(ms.Pend[:0], 0)
	ms.Wakes = append(ms.Wakes[:0], 0)
	ms.Polled = append(ms.Polled[:0], false)
	ms.Age = append(ms.Age[:0], 0)
	ms.Tries = append(ms.Tries[:0], s.tries)
	for w := range ms.Cur {
		ms.Cur[w], ms.Tick[w], ms.Slice[w], ms.Steal[w], ms.Victim[w] = 0, 0, 0, 0, 0
		ms.Local[w] = ms.Local[w][:0]
	}
	ms.Global = ms.Global[:0]
	ms.Spawned = 1
	if s.st == model.Idle {
		ms.Spawned = 0
	}
	if s.st == model.Running || s.st == model.Notified {
		ms.Cur[s.worker] = 1
		ms.Slice[s.worker] = s.slice
	}
	if s.st == model.Queued {
		switch {
		case q == traces.QueueGlobal:
			ms.Global = append(ms.Global, 1)
		case q.Worker() >= 0:
			ms.Local[q.Worker()] = append(ms.Local[q.Worker()], 1)
		}
	}
	return ms
}

// back reads the projection back.
func (pol linPolicy) back(ms *model.State, begun bool) linTaskState {
	s := linTaskState{st: ms.Task[0], tries: ms.Tries[0], begun: begun}
	for w, t := range ms.Cur {
		if t == 1 {
			s.worker, s.slice = int32(w), ms.Slice[w]
		}
	}
	pol.scratch.Put(ms)
	return s
}

func (pol linPolicy) dest(q traces.Queue) int {
	if w := q.Worker(); w >= 0 {
		return w
	}
	return model.Global
}

// linTaskStep is the sequential specification of one task, derived from
// the model: each operation is the model's rule instance (SPAWN, POLL-LOCAL,
// GLOBAL-STEAL, WORKER-STEAL, POLL-PENDING with TASK-SUSPEND, TASK-COMPLETE,
// WAKE) applied by model.Apply to the task's projection, and what the
// executor reported (the wake's outcome, whether the task was re-queued at
// the end of its poll) must be what the model did. Poll begins are not a
// rule: they only pair with poll ends.
func linTaskStep(pol linPolicy, s linTaskState, in linTaskIn) (bool, linTaskState) {
	w := int(in.worker)
	if w >= pol.workers || (in.kind != linSpawn && in.kind != linWake && in.kind != linEnd && w < 0) {
		return false, s
	}
	switch in.kind {
	case linPollBegin:
		if (s.st != model.Running && s.st != model.Notified) || s.worker != in.worker || s.begun {
			return false, s
		}
		s.begun = true
		return true, s
	case linEnd:
		return s.st == model.Done, s
	case linRequeue:
		return false, s // a re-queue outside any poll end: no rule does that
	}
	if in.kind == linPollEnd && pol.begins && !s.begun {
		return false, s
	}
	var q traces.Queue
	st := model.Step{Worker: w, Task: 1, Victim: -1, Dest: -1}
	switch in.kind {
	case linSpawn, linWake:
		st.Rule, st.Dest = model.SPAWN, pol.dest(in.queue)
		if in.kind == linWake {
			st.Rule = model.WAKE
		}
	case linTake:
		switch in.source {
		case traces.SourceLocal, traces.SourceLIFO:
			st.Rule, q = model.POLL_LOCAL, traces.LocalQueue(w)
		case traces.SourceGlobal:
			st.Rule, q = model.GLOBAL_STEAL, traces.QueueGlobal
		case traces.SourceSteal:
			if int(in.victim) >= pol.workers || in.victim < 0 {
				return false, s
			}
			st.Rule, st.Victim, q = model.WORKER_STEAL, int(in.victim), traces.LocalQueue(int(in.victim))
		default:
			return false, s
		}
	}
	ms := pol.project(s, q)
	if in.kind == linWake && in.outcome != traces.OutcomeNone && model.WakeOutcome(ms, 1) != in.outcome.String() {
		pol.scratch.Put(ms)
		return false, s
	}
	if in.kind != linPollEnd {
		if pol.m.Apply(ms, st) != nil {
			pol.scratch.Put(ms)
			return false, s
		}
		return true, pol.back(ms, in.kind == linWake && s.begun)
	}
	// The poll's end: Ready is TASK-COMPLETE; Pending is POLL-PENDING then
	// TASK-SUSPEND (with a re-poll in the slice if the model does one); a
	// panic is a failed TASK-COMPLETE, re-run from a fresh future while
	// the retry policy allows.
	st.Rule = model.TASK_COMPLETE
	switch in.result {
	case traces.ResultPanic, traces.ResultError:
		st.Failed = true
	case traces.ResultPending:
		st.Rule = model.POLL_PENDING
		if pol.m.Apply(ms, st) != nil {
			pol.scratch.Put(ms)
			return false, s
		}
		st.Rule = model.TASK_SUSPEND
		if err := pol.m.Apply(ms, st); err != nil {
			st.Repoll = true
			if pol.m.Apply(ms, st) != nil {
				pol.scratch.Put(ms)
				return false, s
			}
		}
	}
	if st.Rule == model.TASK_COMPLETE && pol.m.Apply(ms, st) != nil {
		pol.scratch.Put(ms)
		return false, s
	}
	queued := ms.Task[0] == model.Queued
	if st.Failed && queued && !in.requeued {
		// The policy's retries are a most: a task may have fewer (one
		// spawned without a way to make it afresh has none), and then its
		// failure ends it.
		pol.scratch.Put(ms)
		return true, linTaskState{st: model.Done}
	}
	if !in.open && queued != in.requeued {
		pol.scratch.Put(ms)
		return false, s // re-queued when the model did not, or the wake was lost
	}
	return true, pol.back(ms, false)
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
			s += " → " + in.outcome.String()
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
	case traces.ResultError:
		return "Ready(Err)"
	}
	return "no result"
}

func (s linTaskState) String() string {
	switch s.st {
	case model.Running, model.Notified:
		p := ""
		if s.begun {
			p = ", polling"
		}
		return fmt.Sprintf("%s(worker %d%s)", s.st, s.worker, p)
	case model.Queued:
		if s.tries > 0 {
			return fmt.Sprintf("QUEUED(attempt %d)", s.tries+1)
		}
	}
	return s.st.String()
}

func linTaskModel(pol linPolicy) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return linTaskState{} },
		Step: func(st, in, _ any) (bool, any) {
			return linTaskStep(pol, st.(linTaskState), *in.(*linTaskIn))
		},
		Hash: func(st any) uint64 {
			s := st.(linTaskState)
			h := uint64(s.st)<<48 | uint64(uint32(s.worker))<<16 | uint64(s.tries)<<8 | uint64(s.slice)<<1
			if s.begun {
				h |= 1
			}
			return h
		},
		DescribeOperation: func(in, _ any) string { return in.(*linTaskIn).String() },
		DescribeState:     func(st any) string { return st.(linTaskState).String() },
	}
}
