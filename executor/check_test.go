package executor

import (
	"errors"
	"fmt"
	"slices"

	"github.com/execspec/execspec/traces"
)

// checkEvents checks the lifecycle of every task in a recorded run, replayed
// in Seq order:
//   - sequence numbers are unique, Call ≤ Seq ≤ Return for queue operations;
//   - pushes, and only pushes, name a queue;
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
	traces.SortBySeq(evs)
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
	qs := newQueues(h)
	push := func(t *tstate, e traces.Event) {
		if t.queued {
			fail("seq %d: task %d pushed on %v while already queued on %v", e.Seq, e.Task, e.Queue, t.queue)
		}
		t.queued, t.queue = true, e.Queue
		if err := qs.push(e); err != nil {
			fail("%v", err)
		}
	}
	var last uint64
	for _, e := range evs {
		if e.Seq == 0 || e.Seq == last {
			fail("event %+v: sequence number zero or repeated", e)
		}
		last = e.Seq
		if e.Call != 0 && !(e.Call < e.Seq && e.Seq <= e.Return) {
			fail("seq %d: call %d / return %d do not bracket it", e.Seq, e.Call, e.Return)
		}
		queueOp := e.Kind == traces.KindSpawn || e.Kind == traces.KindTake || e.Kind == traces.KindRequeue ||
			(e.Kind == traces.KindWake && e.Outcome == traces.OutcomeScheduled)
		if queueOp && (e.Call == 0 || e.Return == 0) {
			fail("seq %d: queue operation %v of task %d without call and return ticks", e.Seq, e.Kind, e.Task)
		}
		if isPush := queueOp && e.Kind != traces.KindTake; isPush != (e.Queue != traces.QueueNone) {
			fail("seq %d: %v of task %d names queue %v", e.Seq, e.Kind, e.Task, e.Queue)
		}
		if e.Task == 0 {
			continue // park, unpark, stop
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
			push(t, e)
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
			moved, err := qs.take(e)
			if err != nil {
				fail("%v", err)
			}
			for _, id := range moved { // steal half
				get(id).queue = traces.LocalQueue(int(e.Worker))
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
			if e.Result == traces.ResultReady || e.Result == traces.ResultPanic || e.Result == traces.ResultError {
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
			if t.lastEnd == traces.ResultPanic || t.lastEnd == traces.ResultError { // a retry: the task lives on
				t.ended = false
			}
			t.polling = -1
			push(t, e)
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
				push(t, e)
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

// queues replays the queue operations of a trace: the global queue, and for
// the "worksteal" policy each worker's local queue and LIFO slot, with the
// policy's parameters from the header.
type queues struct {
	h          traces.Header
	fifoGlobal bool // the global queue must be FIFO (all but "priority")
	ws         bool
	global     []int64
	deq        map[int][]int64
	slot       map[int]int64
	takes      map[int]int
}

func newQueues(h traces.Header) *queues {
	return &queues{h: h, fifoGlobal: h.Policy != "priority", ws: h.Policy == "worksteal",
		deq: map[int][]int64{}, slot: map[int]int64{}, takes: map[int]int{}}
}

func (q *queues) push(e traces.Event) error {
	switch {
	case e.Queue == traces.QueueGlobal:
		if q.ws && e.Worker >= 0 && len(q.deq[int(e.Worker)]) < q.h.Config["local-cap"] &&
			!(q.h.Config["lifo-slot"] == 1 && e.Kind != traces.KindRequeue && q.slot[int(e.Worker)] == 0) {
			return fmt.Errorf("seq %d: worker %d pushed task %d on the global queue, but its local queue had room", e.Seq, e.Worker, e.Task)
		}
		q.global = append(q.global, e.Task)
	case e.Queue > 0:
		w := e.Queue.Worker()
		if int(e.Worker) != w {
			return fmt.Errorf("seq %d: worker %d pushed task %d on worker %d's local queue", e.Seq, e.Worker, e.Task, w)
		}
		if q.h.Config["lifo-slot"] == 1 && e.Kind != traces.KindRequeue && q.slot[w] == 0 {
			q.slot[w] = e.Task
			return nil
		}
		if c := q.h.Config["local-cap"]; c > 0 && len(q.deq[w]) >= c {
			return fmt.Errorf("seq %d: task %d pushed on worker %d's full local queue (capacity %d)", e.Seq, e.Task, w, c)
		}
		q.deq[w] = append(q.deq[w], e.Task)
	default:
		return fmt.Errorf("seq %d: task %d pushed on no queue", e.Seq, e.Task)
	}
	return nil
}

// take removes the task of a take event from where its source says, checks
// that it was at the right end and that the rule's premise held, and
// returns the tasks a steal-half moved to the thief's local queue.
func (q *queues) take(e traces.Event) ([]int64, error) {
	w := int(e.Worker)
	q.takes[w]++
	switch e.Source {
	case traces.SourceGlobal:
		i := slices.Index(q.global, e.Task)
		if i < 0 {
			return nil, fmt.Errorf("seq %d: task %d taken from the global queue, but it is not there", e.Seq, e.Task)
		}
		if q.fifoGlobal && i != 0 {
			return nil, fmt.Errorf("seq %d: task %d taken from the global queue at position %d, not the head", e.Seq, e.Task, i)
		}
		q.global = slices.Delete(q.global, i, i+1)
		gi := q.h.Config["global-interval"]
		if q.ws && len(q.deq[w]) > 0 && !(gi > 0 && q.takes[w]%gi == 0) {
			return nil, fmt.Errorf("seq %d: GLOBAL-STEAL by worker %d, but its local queue holds %v", e.Seq, w, q.deq[w])
		}
	case traces.SourceLIFO:
		if q.slot[w] != e.Task {
			return nil, fmt.Errorf("seq %d: task %d taken from worker %d's LIFO slot, which holds %d", e.Seq, e.Task, w, q.slot[w])
		}
		q.slot[w] = 0
	case traces.SourceLocal:
		d := q.deq[w]
		if len(d) == 0 {
			return nil, fmt.Errorf("seq %d: POLL-LOCAL of task %d by worker %d from an empty local queue", e.Seq, e.Task, w)
		}
		if q.h.Config["owner-lifo"] == 1 {
			if d[len(d)-1] != e.Task {
				return nil, fmt.Errorf("seq %d: POLL-LOCAL of task %d by worker %d, but the owner end (tail) holds %d", e.Seq, e.Task, w, d[len(d)-1])
			}
			q.deq[w] = d[:len(d)-1]
		} else {
			if d[0] != e.Task {
				return nil, fmt.Errorf("seq %d: POLL-LOCAL of task %d by worker %d, but the owner end (head) holds %d", e.Seq, e.Task, w, d[0])
			}
			q.deq[w] = d[1:]
		}
	case traces.SourceSteal:
		v := int(e.Victim)
		d := q.deq[v]
		if len(d) == 0 || d[0] != e.Task {
			return nil, fmt.Errorf("seq %d: WORKER-STEAL of task %d by worker %d from worker %d, whose steal end holds %v", e.Seq, e.Task, w, v, d)
		}
		if len(q.global) > 0 {
			return nil, fmt.Errorf("seq %d: WORKER-STEAL by worker %d while the global queue holds %v (premise global = ∅ fails)", e.Seq, w, q.global)
		}
		if len(q.deq[w]) > 0 {
			return nil, fmt.Errorf("seq %d: WORKER-STEAL by worker %d while its own local queue holds %v", e.Seq, w, q.deq[w])
		}
		k := 1
		if q.h.Config["steal-half"] == 1 {
			k = (len(d) + 1) / 2
		}
		moved := slices.Clone(d[1:k])
		q.deq[v] = d[k:]
		q.deq[w] = append(q.deq[w], moved...)
		return moved, nil
	default:
		return nil, fmt.Errorf("seq %d: take of task %d with no source", e.Seq, e.Task)
	}
	return nil, nil
}
