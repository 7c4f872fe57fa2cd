package executor

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/execspec/execspec/traces"
)

// sliceRecorder keeps every event, in arrival order.
type sliceRecorder struct {
	mu sync.Mutex
	ev []traces.Event
}

func (r *sliceRecorder) Record(e traces.Event) {
	r.mu.Lock()
	r.ev = append(r.ev, e)
	r.mu.Unlock()
}

func (r *sliceRecorder) events() []traces.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ev)
}

// checkEvents checks the lifecycle of every task in a recorded run, replayed
// in Seq order:
//   - sequence numbers are unique, Call ≤ Seq ≤ Return for queue operations;
//   - every task is spawned once, and ends (PollEnd Ready or Panic without a
//     re-queue) exactly once, if done is true for the run;
//   - a task is taken only from the queue it is in (by membership; the
//     global queue of a "fifo"-family policy is also checked to be FIFO);
//   - a task is never polled by two workers at once, nor after it ended;
//   - every wake that did not find the task DONE is followed by a poll of
//     it, or by its end.
//
// It is the executor package's own small check; the conformance checker
// replays the full model.
func checkEvents(h traces.Header, evs []traces.Event, wantTasks int, done bool) error {
	evs = slices.Clone(evs)
	slices.SortFunc(evs, func(a, b traces.Event) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	})
	var errs []error
	kinds := map[string]int{} // at most 3 reports of each kind
	fail := func(format string, args ...any) {
		if kinds[format]++; kinds[format] <= 3 {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	type tstate struct {
		spawned, ended bool
		endSeq         uint64
		queue          traces.Queue // where it is queued, QueueNone if not
		queued         bool
		polling        int    // worker polling it, -1 if none
		wokeAt         uint64 // seq of the oldest wake not yet followed by a poll, 0 = none
		lastEnd        traces.Result
		notified       bool // woken during the current poll
	}
	tasks := map[int64]*tstate{}
	get := func(id int64) *tstate {
		t := tasks[id]
		if t == nil {
			t = &tstate{polling: -1}
			tasks[id] = t
		}
		return t
	}
	fifoGlobal := h.Policy == "fifo" || h.Policy == "timeslice" || h.Policy == "retry"
	var global []int64
	push := func(t *tstate, id int64, q traces.Queue, seq uint64) {
		if t.queued {
			fail("seq %d: task %d pushed on %v while already queued on %v", seq, id, q, t.queue)
		}
		t.queued, t.queue = true, q
		if q == traces.QueueGlobal {
			global = append(global, id)
		}
	}
	var last uint64
	for _, e := range evs {
		if e.Seq == 0 || e.Seq == last {
			fail("event %+v: sequence number zero or repeated", e)
		}
		last = e.Seq
		if e.Call != 0 && !(e.Call < e.Seq && e.Seq < e.Return) {
			fail("seq %d: call %d / return %d do not bracket it", e.Seq, e.Call, e.Return)
		}
		if e.Task == 0 {
			continue // park, unpark
		}
		t := get(e.Task)
		if e.Kind != traces.KindSpawn && !t.spawned {
			fail("seq %d: %v of task %d before its spawn", e.Seq, e.Kind, e.Task)
		}
		switch e.Kind {
		case traces.KindSpawn:
			if t.spawned {
				fail("seq %d: task %d spawned twice", e.Seq, e.Task)
			}
			t.spawned = true
			push(t, e.Task, e.Queue, e.Seq)
		case traces.KindTake:
			if t.ended {
				fail("seq %d: task %d taken after it ended", e.Seq, e.Task)
			}
			if !t.queued {
				fail("seq %d: task %d taken but not queued", e.Seq, e.Task)
			}
			if t.polling >= 0 {
				fail("seq %d: task %d taken by worker %d while worker %d polls it", e.Seq, e.Task, e.Worker, t.polling)
			}
			want := traces.QueueGlobal
			switch e.Source {
			case traces.SourceLocal, traces.SourceLIFO:
				want = traces.LocalQueue(int(e.Worker))
			case traces.SourceSteal:
				want = traces.LocalQueue(int(e.Victim))
			}
			// Steal-half moves tasks between local queues without an event
			// per task; membership in local queues is then not tracked.
			if t.queued && t.queue != want && !(h.Config["steal-half"] == 1 && t.queue > 0 && want > 0) {
				fail("seq %d: task %d taken from %v (source %v) but queued on %v", e.Seq, e.Task, want, e.Source, t.queue)
			}
			if t.queue == traces.QueueGlobal {
				i := slices.Index(global, e.Task)
				if fifoGlobal && i != 0 {
					fail("seq %d: task %d taken from the global queue at position %d, not the head", e.Seq, e.Task, i)
				}
				if i >= 0 {
					global = slices.Delete(global, i, i+1)
				}
			}
			t.queued = false
			t.polling = int(e.Worker)
		case traces.KindPollBegin:
			if t.ended {
				fail("seq %d: task %d polled after it ended", e.Seq, e.Task)
			}
			if t.polling != int(e.Worker) {
				fail("seq %d: task %d polled by worker %d but taken by %d", e.Seq, e.Task, e.Worker, t.polling)
			}
			t.wokeAt = 0
			t.notified = false
		case traces.KindPollEnd:
			if t.polling != int(e.Worker) {
				fail("seq %d: poll of task %d ended on worker %d, not polling it", e.Seq, e.Task, e.Worker)
			}
			t.lastEnd = e.Result
			if e.Result == traces.ResultReady || e.Result == traces.ResultPanic {
				if t.ended {
					fail("seq %d: task %d ended twice", e.Seq, e.Task)
				}
				t.ended, t.endSeq, t.polling = true, e.Seq, -1
			}
			// A Pending poll that was NOTIFIED continues with a Requeue (or,
			// under a time slice, a PollBegin); the task stays with the
			// worker until then. Otherwise the task is WAITING.
			if e.Result == traces.ResultPending && !t.notified {
				t.polling = -1
			}
		case traces.KindRequeue:
			if t.lastEnd == traces.ResultPanic { // a retry: the task lives on
				t.ended = false
			}
			t.polling = -1
			push(t, e.Task, e.Queue, e.Seq)
		case traces.KindWake:
			switch e.Outcome {
			case traces.OutcomeLate:
				if !t.ended {
					fail("seq %d: wake of task %d reported late, but it has not ended", e.Seq, e.Task)
				}
			case traces.OutcomeScheduled:
				if t.ended {
					fail("seq %d: wake scheduled task %d after it ended", e.Seq, e.Task)
				}
				push(t, e.Task, e.Queue, e.Seq)
				fallthrough
			default:
				if t.wokeAt == 0 {
					t.wokeAt = e.Seq
				}
			}
			if e.Outcome == traces.OutcomeNotified {
				if t.polling < 0 {
					fail("seq %d: wake of task %d reported notified, but nobody polls it", e.Seq, e.Task)
				}
				t.notified = true
			}
		case traces.KindPanic:
		}
		if t.ended {
			t.wokeAt = 0
		}
	}
	n := 0
	for id, t := range tasks {
		if !t.spawned {
			continue
		}
		n++
		if done && !t.ended {
			fail("task %d never ended", id)
		}
		if t.wokeAt != 0 {
			fail("task %d: wake at seq %d was never followed by a poll (lost wakeup)", id, t.wokeAt)
		}
	}
	if wantTasks >= 0 && n != wantTasks {
		fail("%d tasks spawned, want %d", n, wantTasks)
	}
	return errors.Join(errs...)
}
