package lin

import (
	"errors"
	"fmt"
	"sort"

	"github.com/anishathalye/porcupine"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// linOp is one operation of an executor history: a task lifecycle step,
// with the queue effects it had (a push, a take), as an interval on the
// trace's logical clock.
type linOp struct {
	task      linTaskIn
	call, ret int64
	client    int
	pushQ     traces.Queue // queue the task was pushed onto; QueueNone if none
	takeQ     traces.Queue // queue the task was taken from; QueueNone if none
	takeKind  QueueOpKind  // how it was taken: TakeHead, TakeTail, TakeSlot or TakeAny
	pushKind  QueueOpKind  // how it was pushed: Push or PushSlot
	moved     []int64      // a steal-half: the tasks that went to the thief's deque with it
	event     int          // index in the events slice; -1 for synthetic operations
	key       int64        // the event's place in the trace's order (Seq, else Call)
}

// linNote is an annotation of the visualization, about task (0: about a
// worker, such as a park).
type linNote struct {
	porcupine.Annotation
	task int64
}

// linHistory is a trace turned into operations.
type linHistory struct {
	ops     []linOp
	queues  map[traces.Queue][]QueueOp
	notes   []linNote // steals, parks and wakes, for the visualization
	pol     linPolicy
	workers int
	maxTick int64
}

// linEventTicks returns the interval of an event: [Call, Return] when the
// executor recorded them, else the instant Seq. Both come from the same
// logical clock. An operation that was called and never returned gets
// Return = +inf.
func linEventTicks(e traces.Event) (int64, int64, error) {
	if max(e.Seq, e.Call, e.Return) >= 1<<61 {
		return 0, 0, fmt.Errorf("tick %d out of range (below 2^61)", max(e.Seq, e.Call, e.Return))
	}
	if e.Call != 0 || e.Return != 0 {
		return linTicks(e.Call, e.Return)
	}
	if e.Seq == 0 {
		return 0, 0, errors.New("no clock: Seq, Call and Return are all 0")
	}
	return linTicks(e.Seq, e.Seq)
}

func linClient(worker int32) int {
	if worker < 0 {
		return 0
	}
	return int(worker) + 1
}

// linBuildHistory turns events into operations. Events need not be sorted:
// they are ordered by their clock. A re-queue is paired with the poll end
// of the same task before it, making one TASK-SUSPEND operation spanning
// both (the rule is one transition with two cases; the executor records
// them as two events).
//
// Ticks are doubled and each worker's operations made sequential (see
// below), so the history's ticks are not the trace's.
//
// In a run that was cut (complete false), a pending poll end that is the
// last event of its task and of its worker may have been cut before its
// re-queue: it is kept as an operation that never returned, whose re-queue
// the state decides.
func linBuildHistory(h traces.Header, events []traces.Event, ownerFIFO, complete bool) (*linHistory, error) {
	hist := &linHistory{queues: map[traces.Queue][]QueueOp{}, workers: h.Workers, ops: make([]linOp, 0, len(events))}
	if v, ok := h.Config["owner-lifo"]; ok && v == 0 {
		ownerFIFO = true
	}
	ownerKind := TakeTail
	if ownerFIFO {
		ownerKind = TakeHead
	}
	// With a LIFO slot, a task a worker spawns or wakes goes to its slot
	// when the slot is empty (a re-queue never does), and POLL-LOCAL through
	// the slot takes it from there.
	slot := h.Config["lifo-slot"] != 0
	// The priority policy takes by priority, which the trace does not
	// carry: its queue is checked as a bag (no element taken twice, none
	// taken before it was pushed, none lost).
	globalTake := TakeHead
	if h.Policy == string(model.Priority) {
		globalTake = TakeAny
	}
	pushKind := func(q traces.Queue) QueueOpKind {
		if slot && q.Worker() >= 0 {
			return PushSlot
		}
		return Push
	}

	type ev struct {
		i         int
		call, ret int64
		key       int64
	}
	var errs []error
	bad := func(i int, e traces.Event, format string, args ...any) {
		if len(errs) < 10 {
			errs = append(errs, fmt.Errorf("event %d (seq %d, kind %d): %s", i+1, e.Seq, e.Kind, fmt.Sprintf(format, args...)))
		}
	}
	order := make([]ev, 0, len(events))
	for i, e := range events {
		switch e.Kind {
		case traces.KindSpawn, traces.KindTake, traces.KindPollBegin, traces.KindPollEnd, traces.KindWake, traces.KindRequeue:
			if e.Kind == traces.KindWake && e.Task == 0 && e.Queue == traces.QueueNone {
				continue // v1.1: a wake through a no-op waker, no queue operation
			}
			if e.Task <= 0 {
				bad(i, e, "task %d (task ids start from 1)", e.Task)
				continue
			}
		case traces.KindPark, traces.KindUnpark, traces.KindPanic, traces.KindStep, traces.KindRegister, traces.KindStop:
		default:
			bad(i, e, "unknown event kind")
			continue
		}
		if e.Worker < -1 {
			bad(i, e, "worker %d (want -1 or a worker index)", e.Worker)
			continue
		}
		c, r, err := linEventTicks(e)
		if err != nil {
			bad(i, e, "%v", err)
			continue
		}
		key := c
		if e.Seq != 0 && e.Seq < linInf {
			key = int64(e.Seq)
		}
		order = append(order, ev{i, c, r, key})
		hist.maxTick = max(hist.maxTick, c)
		if r < linInf {
			hist.maxTick = max(hist.maxTick, r)
		}
		if int(e.Worker)+1 > hist.workers {
			hist.workers = int(e.Worker) + 1
		}
		if e.Kind == traces.KindTake && e.Source == traces.SourceSteal && int(e.Victim)+1 > hist.workers {
			hist.workers = int(e.Victim) + 1
		}
		if e.Kind == traces.KindPollBegin {
			hist.pol.begins = true
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	begins := hist.pol.begins
	pol, err := newLinPolicy(h, hist.workers)
	if err != nil {
		return nil, err
	}
	hist.pol, hist.pol.begins = pol, begins
	sort.SliceStable(order, func(a, b int) bool { return order[a].key < order[b].key })

	// A worker is one goroutine: its operations run one after another, in
	// the order of their Seq (each drawn where the operation took effect).
	// So an operation of worker w took effect after w's previous one did,
	// whatever its recorded Call says: executors may record a Call far
	// earlier (any earlier clock value is sound), which would let
	// porcupine try w's operations in orders w could not have run them in,
	// an exponential search for nothing. Ticks are doubled, and a worker's
	// operation is called just after its previous one returned, when its
	// recorded Call is earlier. Operations from outside any worker (-1)
	// may come from many goroutines and keep their intervals.
	last := map[int32]int64{}
	for k := range order {
		x := &order[k]
		x.call *= 2
		if x.ret < linInf {
			x.ret *= 2
		}
		w := events[x.i].Worker
		if w < 0 {
			continue
		}
		if lr, ok := last[w]; ok && lr < linInf && lr+1 <= x.ret {
			x.call = max(x.call, lr+1)
		}
		last[w] = x.ret
	}
	hist.maxTick *= 2

	// defaultQueue is where the model pushes when the trace does not say.
	defaultQueue := func(worker int32) traces.Queue {
		if worker < 0 {
			return traces.QueueGlobal
		}
		return traces.LocalQueue(int(worker))
	}
	queueOp := func(q traces.Queue, kind QueueOpKind, x ev, e traces.Event) {
		hist.queues[q] = append(hist.queues[q], QueueOp{
			Client: linClient(e.Worker), Kind: kind, Value: e.Task,
			Call: uint64(x.call), Return: linRet(x.ret), Seq: e.Seq,
		})
	}
	lastEnd := map[int64]int{}  // task → index in ops of its poll end still open to a re-queue
	orphan := map[int64]linOp{} // task → re-queue seen before its poll end

	// Steal-half moves tasks from the victim's deque to the thief's without
	// an event of their own. They are inferred. A thief steals only when
	// its own deque is empty, so a task taken from local(q) that was never
	// pushed there came with q's last steal before the take: from the
	// queue it was pushed onto (one hop), or, through one more thief m,
	// with m's last steal before that one (two hops; no further). Each
	// steal on the path then also removes the task from its victim (after
	// the head) and pushes it onto its thief's deque.
	stealHalf := h.Config["steal-half"] != 0
	loc := map[int64]traces.Queue{} // task → the queue it was last pushed onto
	type stealRef struct {
		op, qop int // in hist.ops, and in the victim's queue operations
		victim  int32
	}
	steals := map[int32][]stealRef{} // thief → its steals, in order
	pushed := func(t int64, q traces.Queue) {
		if stealHalf {
			loc[t] = q
		}
	}
	move := func(ref stealRef, thief int32, t int64) {
		st := &hist.ops[ref.op]
		st.moved = append(st.moved, t)
		vq := hist.queues[traces.LocalQueue(int(ref.victim))]
		vq[ref.qop].Moved = append(vq[ref.qop].Moved, t)
		tq := traces.LocalQueue(int(thief))
		hist.queues[tq] = append(hist.queues[tq], QueueOp{
			Client: st.client, Kind: Push, Value: t,
			Call: uint64(st.call), Return: linRet(st.ret), Seq: st.task.seq,
		})
	}
	for _, x := range order {
		e := events[x.i]
		in := linTaskIn{task: e.Task, worker: e.Worker, seq: e.Seq, victim: -1}
		op := linOp{call: x.call, ret: x.ret, client: linClient(e.Worker), event: x.i, key: x.key}
		switch e.Kind {
		case traces.KindPark, traces.KindUnpark:
			name := "park"
			if e.Kind == traces.KindUnpark {
				name = "unpark"
			}
			hist.notes = append(hist.notes, linNote{Annotation: porcupine.Annotation{
				Tag: "parks", Start: x.call, End: linFinite(x.call, x.ret),
				Description: fmt.Sprintf("%s %d", name, e.Worker),
				Details:     fmt.Sprintf("worker %d: %s [event %d]", e.Worker, name, e.Seq),
			}})
			continue
		case traces.KindPanic, traces.KindStep, traces.KindRegister, traces.KindStop:
			continue
		case traces.KindSpawn:
			in.kind = linSpawn
			op.pushQ = e.Queue
			if op.pushQ == traces.QueueNone {
				op.pushQ = defaultQueue(e.Worker)
			}
			in.queue = op.pushQ
			op.pushKind = pushKind(op.pushQ)
			queueOp(op.pushQ, op.pushKind, x, e)
			pushed(e.Task, op.pushQ)
		case traces.KindTake:
			in.kind = linTake
			in.source = e.Source
			delete(lastEnd, e.Task)
			delete(orphan, e.Task)
			switch e.Source {
			case traces.SourceLocal, traces.SourceLIFO:
				if e.Worker < 0 {
					bad(x.i, e, "a local take outside any worker")
					continue
				}
				op.takeQ, op.takeKind = traces.LocalQueue(int(e.Worker)), ownerKind
				if e.Source == traces.SourceLIFO && slot {
					op.takeKind = TakeSlot
				}
			case traces.SourceGlobal:
				op.takeQ, op.takeKind = traces.QueueGlobal, globalTake
			case traces.SourceSteal:
				if e.Victim < 0 || e.Victim == e.Worker {
					bad(x.i, e, "steal by worker %d from victim %d", e.Worker, e.Victim)
					continue
				}
				in.victim = e.Victim
				op.takeQ, op.takeKind = traces.LocalQueue(int(e.Victim)), TakeHead
				hist.notes = append(hist.notes, linNote{task: e.Task, Annotation: porcupine.Annotation{
					Tag: "steals", Start: x.call, End: linFinite(x.call, x.ret),
					Description: fmt.Sprintf("steal %d", e.Task),
					Details:     fmt.Sprintf("worker %d steals task %d from worker %d [event %d]", e.Worker, e.Task, e.Victim, e.Seq),
				}})
			default:
				bad(x.i, e, "take without a source")
				continue
			}
			if stealHalf {
				if from, ok := loc[e.Task]; ok && from != op.takeQ && from.Worker() >= 0 && op.takeQ.Worker() >= 0 {
					q, p := int32(op.takeQ.Worker()), int32(from.Worker())
					if ss := steals[q]; len(ss) > 0 {
						last := ss[len(ss)-1]
						switch {
						case last.victim == p:
							move(last, q, e.Task)
						default:
							// Through m = last.victim: m's last steal
							// before q's, from p.
							m := last.victim
							for k := len(steals[m]) - 1; k >= 0; k-- {
								if r := steals[m][k]; r.op < last.op {
									if r.victim == p {
										move(r, m, e.Task)
										move(last, q, e.Task)
									}
									break
								}
							}
						}
					}
				}
				delete(loc, e.Task)
				if e.Source == traces.SourceSteal {
					steals[e.Worker] = append(steals[e.Worker], stealRef{len(hist.ops), len(hist.queues[op.takeQ]), e.Victim})
				}
			}
			queueOp(op.takeQ, op.takeKind, x, e)
		case traces.KindPollBegin:
			in.kind = linPollBegin
		case traces.KindPollEnd:
			in.kind = linPollEnd
			in.result = e.Result
			if e.Result == traces.ResultNone || e.Result > traces.ResultError {
				bad(x.i, e, "poll end without a result")
				continue
			}
			if o, ok := orphan[e.Task]; ok && o.task.worker == e.Worker {
				// The re-queue was recorded first: join it.
				delete(orphan, e.Task)
				in.requeued = true
				op.pushQ, op.pushKind = o.pushQ, Push
				op.call = min(op.call, o.call)
				op.ret = max(op.ret, o.ret)
			} else {
				lastEnd[e.Task] = len(hist.ops)
			}
		case traces.KindWake:
			in.kind = linWake
			in.outcome = e.Outcome
			if e.Outcome > traces.OutcomeDropped {
				bad(x.i, e, "unknown wake outcome %d", e.Outcome)
				continue
			}
			if e.Outcome == traces.OutcomeScheduled {
				op.pushQ = e.Queue
				if op.pushQ == traces.QueueNone {
					op.pushQ = defaultQueue(e.Worker)
				}
				op.pushKind = pushKind(op.pushQ)
				queueOp(op.pushQ, op.pushKind, x, e)
				pushed(e.Task, op.pushQ)
				in.queue = op.pushQ
			}
			hist.notes = append(hist.notes, linNote{task: e.Task, Annotation: porcupine.Annotation{
				Tag: "wakes", Start: x.call, End: linFinite(x.call, x.ret),
				Description: fmt.Sprintf("wake %d", e.Task),
				Details:     fmt.Sprintf("wake of task %d by %s: %s [event %d]", e.Task, linWho(e.Worker), e.Outcome.String(), e.Seq),
			}})
		case traces.KindRequeue:
			q := e.Queue
			if q == traces.QueueNone {
				q = defaultQueue(e.Worker)
			}
			queueOp(q, Push, x, e)
			pushed(e.Task, q)
			if k, ok := lastEnd[e.Task]; ok && hist.ops[k].task.worker == e.Worker {
				delete(lastEnd, e.Task)
				p := &hist.ops[k]
				p.task.requeued = true
				p.pushQ, p.pushKind = q, Push
				p.ret = max(p.ret, x.ret)
				continue
			}
			in.kind = linRequeue
			op.pushQ, op.pushKind = q, Push
			op.task = in
			orphan[e.Task] = op
			continue
		}
		op.task = in
		hist.ops = append(hist.ops, op)
	}
	// A re-queue never joined by a poll end is an operation of its own.
	for _, o := range orphan {
		hist.ops = append(hist.ops, o)
	}
	if !complete {
		// The worker re-queues right after the poll ends, before anything
		// else: a worker that did something later was not cut there.
		lastOf := map[int32]int64{}
		for _, x := range order {
			w := events[x.i].Worker
			lastOf[w] = max(lastOf[w], x.key)
		}
		for _, k := range lastEnd {
			p := &hist.ops[k]
			if p.task.result == traces.ResultPending && !p.task.requeued && lastOf[p.task.worker] <= p.key {
				p.task.open = true
				p.ret = linInf
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return hist, nil
}

func linRet(r int64) uint64 {
	if r == linInf {
		return 0
	}
	return uint64(r)
}

func linFinite(call, ret int64) int64 {
	if ret == linInf {
		return call
	}
	return ret
}

func linWho(w int32) string {
	if w < 0 {
		return "outside"
	}
	return fmt.Sprintf("worker %d", w)
}
