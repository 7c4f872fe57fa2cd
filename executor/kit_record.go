package executor

import "github.com/execspec/execspec/traces"

// How a Kit records.
//
// The Kit records by itself every event it sees: the register of a poll
// (Context.Register), the end of a poll (Ready, Pending, Panic, with the
// panic's event), every wake with its outcome as the task's state word
// gives it, and parking. The pushes and takes happen in the executor's own
// queue, under its own lock, and their Seq must be drawn inside that
// critical section (docs/trace-format.md, "Events" in doc.go), so the
// executor marks them with one call each:
//
//   - Pushed(t) (PushedTo for another queue than the global one), inside
//     the critical section of the push that Schedule makes. While a
//     recorder is set, the Kit hands Schedule a task that is not QUEUED
//     yet (IDLE after a spawn, WAITING after a wake, NOTIFIED after a poll
//     woken during it): Pushed makes the transition to QUEUED, drawing its
//     Seq between the load and the compare-and-swap, and records the spawn,
//     the scheduling wake, or the poll's end and the re-queue. Wakes of a
//     WAITING task are serialized by the Kit while Schedule runs, so no
//     wake can find the task between the two.
//   - Took(t, w) (TookFrom for a take from a worker's queue, or a steal),
//     inside the critical section of the pop: the take's transition to
//     RUNNING and its Seq. Run records the take and the poll's beginning.
//
// If Schedule returns without having called Pushed, the Kit makes the
// transition and records it then, outside the push's critical section,
// where a check may find it out of order; a take without Took is recorded
// by Run, likewise. Without a recorder Pushed and Took cost a nil check
// (Took also makes the QUEUED → RUNNING transition, which Run then skips).
//
// A Kit hands events to the Recorder one by one, through Record, as soon as
// each operation has written them, even to a BatchRecorder: every event of
// a task is in the recorder before the task's end is known.

// recordOnly hides a BatchRecorder's batches: the Kit's pushes are written
// under the executor's locks, which the Kit does not know, so the batching
// of the built-in executors (record.go) does not apply.
type recordOnly struct{ r Recorder }

func (o recordOnly) Record(e traces.Event) { o.r.Record(e) }

// SetRecorder makes the Kit report its events to r (nil: none, the
// default). Call it before the first Spawn, from the executor's own
// SetRecorder (executor.Reporter); once the workers run it does nothing.
func (k *Kit) SetRecorder(r Recorder) {
	if k.b.started.Load() {
		return
	}
	if r != nil {
		r = recordOnly{r}
	}
	k.b.setRecorder(r)
}

// Header returns the trace header of an executor on this Kit that follows
// policy (a policy of the model: "fifo" for one shared FIFO queue,
// "worksteal", ...), for the executor's Describe (executor.Describer).
func (k *Kit) Header(name, policy string) traces.Header {
	return header(name, k.b.nworkers, policy, nil)
}

// Pushed records that Schedule has just pushed t onto the executor's
// global queue. Call it inside the push's critical section, once per
// Schedule call.
func (k *Kit) Pushed(t *JoinHandle) { k.PushedTo(t, traces.QueueGlobal) }

// PushedTo is Pushed for a push onto queue q (traces.LocalQueue(w) for
// worker w's own queue).
func (k *Kit) PushedTo(t *JoinHandle, q traces.Queue) {
	if k.b.rec == nil {
		return
	}
	tk := (*task)(t)
	old := tk.state.Load()
	k.pushed(tk, q, old, false)
}

// pushed makes t, whose state word was word (IDLE, WAITING or NOTIFIED),
// QUEUED, and records the push. It does nothing if t is no longer in that
// state (it was pushed already: a second Pushed for one Schedule, or a
// second push, whose take the trace then shows of a task not queued), or,
// if exact, if the word changed at all.
func (k *Kit) pushed(t *task, q traces.Queue, word uint64, exact bool) {
	b := &k.b
	from := word & stMask
	if from != 0 && from != stWaiting && from != stNotified {
		return
	}
	w := b.inWorker()
	var s1, s2 uint64
	for {
		old := t.state.Load()
		if old&stMask != from || exact && old != word {
			return
		}
		if from == stNotified {
			s2 = b.clock.Add(2)
			s1 = s2 - 1
		} else {
			s1 = b.tick()
		}
		if t.state.CompareAndSwap(old, to(old, stQueued)) {
			break
		}
	}
	switch from {
	case 0:
		b.emit(w, evPush(traces.KindSpawn, s1, t, w).WithQueueOp(q, s1-1))
	case stWaiting:
		b.emit(w, evPush(traces.KindWake, s1, t, w).WithOutcome(traces.OutcomeScheduled).WithQueueOp(q, s1-1))
	default:
		b.emit(w, evPoll(traces.KindPollEnd, s1, t, w).WithResult(traces.ResultPending))
		b.emit(w, evPush(traces.KindRequeue, s2, t, w).WithQueueOp(q, s1-1))
	}
	b.sync(w)
}

// scheduleRec hands t, not yet QUEUED, to Schedule, whose Pushed makes it
// QUEUED; if Schedule did not call Pushed, it is done here, provided the
// state word did not change meanwhile at all (else a worker may have
// taken t already; a wake that coalesced with a NOTIFIED t also changes
// it, and then t stays NOTIFIED in its queue, which Run accepts).
func (k *Kit) scheduleRec(t *task) {
	word := t.state.Load()
	k.schedule((*JoinHandle)(t))
	k.pushed(t, traces.QueueGlobal, word, true)
}

// wakeRec is wake when recording: a wake that finds t WAITING holds wmu
// from its check until Schedule has returned, so that no other wake acts
// on t between the check and the transition in Pushed.
func (k *Kit) wakeRec(t *task) {
	w := k.b.inWorker()
	for !k.b.wakeNoPush(t, w) {
		k.wmu.Lock()
		if t.state.Load()&stMask == stWaiting {
			k.scheduleRec(t)
			k.wmu.Unlock()
			return
		}
		k.wmu.Unlock()
	}
}

// Took records that worker w has just taken t from the head of the
// executor's global queue (GLOBAL-STEAL): call it inside the pop's critical
// section, then Run(t, w).
func (k *Kit) Took(t *JoinHandle, w int) { k.TookFrom(t, w, traces.SourceGlobal, -1) }

// TookFrom is Took for a take from src: traces.SourceLocal (the owner end
// of w's own queue, POLL-LOCAL) or traces.SourceSteal from victim's queue
// (WORKER-STEAL).
func (k *Kit) TookFrom(t *JoinHandle, w int, src traces.Source, victim int) {
	tk := (*task)(t)
	seq := k.b.running(tk)
	if k.b.rec != nil {
		k.b.stashTake(w, src, victim, seq)
	}
}

// begin makes t RUNNING on worker w unless Took did, and records the take
// and the poll's beginning.
func (k *Kit) begin(t *task, w int) {
	if s := t.state.Load() & stMask; s != stRunning && s != stNotified {
		seq := k.b.running(t)
		if k.b.rec != nil {
			k.b.stashTake(w, traces.SourceGlobal, -1, seq)
		}
	}
	if k.b.rec != nil {
		k.b.recordTakeAndBegin(t, w)
	}
}
