package conform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/execspec/execspec/checker/internal/frame"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Format v1.1 (a header with "minor":1) in conformance checking. A v1.0
// trace never reaches this file: Conformance.v11 is nil for it, and every
// hook in conform.go is one nil test.
//
//	stop (worker -1)     the executor stopped. reason shutdown (or none):
//	                     tasks not DONE are abandoned at stop (listed by
//	                     state), not lost wakeups, and do not make the
//	                     verdict unknown; only wakes may follow (a waker
//	                     outliving its executor), late, counted
//	                     (WakesAfterStop). reason panic or unwound (a
//	                     crash): tasks not DONE are lost, a violation;
//	                     no event may follow
//	stop (worker w)      w stopped: no event of w may follow; reason panic
//	                     or unwound: a task w was polling is lost unless
//	                     it ends DONE
//	wake without task    a no-op waker: counted (NoTaskWakes), no rule
//	poll-end error       as poll-end panic (a failed task: DONE, or re-run
//	                     by the retry policy), counted apart (ErrorCount)
//	future               a poll (poll-begin, register, poll-end) of a
//	                     future that already returned ready, panic or error
//	                     violates TASK-COMPLETE: a retry polls a new future
//	time                 non-decreasing per worker
//	spurious-polls: 1    a requeue of a WAITING task (a busy re-queue) is a
//	                     WAKE by the executor itself; a poll-begin of a
//	                     WAITING task on the worker whose poll of it just
//	                     returned Pending, with no take between, is an
//	                     in-place re-poll (TASK-SUSPEND's re-poll of a task
//	                     that was not woken). Both counted (SpuriousPolls);
//	                     without the key both violate TASK-SUSPEND.
//	policy priority      every spawn carries a priority; a GLOBAL-STEAL
//	                     takes the model's pick: the first task passed over
//	                     at least aging times by takes of other tasks, else
//	                     the first task of the highest priority; a wake or
//	                     requeue with a priority changes the task's
//	slice-us (timeslice) a re-poll in place is allowed while the poll-end
//	                     before it is earlier than the slice's start (the
//	                     first poll-begin after the take) + slice-us·1000 ns
//
// Side tables are per worker, or per task only when their feature is on:
// priorities and ages under the priority policy, finished futures once a
// future id is seen.
type confV11 struct {
	spurious bool
	sliceNs  int64 // slice-us · 1000; 0 = no time-based slice

	stopped    bool // the whole executor stopped
	stopIdx    int
	stopEv     traces.Event
	lostOn     []int64 // tasks a worker was polling when it crashed (stop, reason panic or unwound)
	wakesAfter int     // wakes after an orderly stop
	wstopped   []bool  // per worker, allocated at the first worker stop
	lastPend   []int32 // per worker: task whose poll returned Pending (WAITING), no poll-begin by the worker since
	lastTime   []int64 // per worker: the time of its last event with a time
	slStart    []int64 // per worker: time of the first poll-begin after its take; -1 = not yet
	slEnd      []int64 // per worker: time of its last poll-end

	finished []int64 // per task: the future id that last finished; grown once a future id is seen
	polling  []int64 // per worker: the future id of its poll in progress (0: none, or no id), once a future id is seen

	prioOn bool    // policy priority in a v1.1 trace
	aging  int     // passes after which a queued task runs first; 0 = no aging
	prio   []int32 // per task; the ages are counted by the global queue's index (package globalq)

	spuriousPolls int
	noTaskWakes   int
	nerrors       int
	errors        []Finding
}

// V11 is the part of a Report that only v1.1 traces
// fill.
type V11 struct {
	// SpuriousPolls counts busy re-queues and in-place re-polls of tasks
	// that were not woken (legal under config spurious-polls: 1).
	SpuriousPolls int
	// NoTaskWakes counts wakes through wakers that name no task.
	NoTaskWakes int
	// Errors are the poll-ends with result error (Ready(Err)), the first
	// 100; ErrorCount counts them all. Panics are counted apart.
	Errors     []Finding
	ErrorCount int
	// Stopped: the trace ends with a stop of the whole executor, at event
	// StopIndex (from 0). Abandoned are the tasks not DONE then, by state;
	// they are neither lost wakeups nor never-completed tasks.
	Stopped   bool
	StopIndex int
	Abandoned []AbandonedTask
	// StopReason is the reason of that stop; after a crash (panic,
	// unwound) the tasks not DONE are Lost, a violation, and Abandoned is
	// empty. WakesAfterStop counts the wakes after an orderly stop (wakers
	// that outlived the executor: legal, late).
	StopReason     traces.StopReason
	Lost           []AbandonedTask
	WakesAfterStop int
	// PriorityUnchecked: a v1.0 trace under the priority policy, which
	// carries no priorities: the order of its takes was not checked.
	PriorityUnchecked bool
}

// AbandonedTask is a task not DONE when the executor stopped.
type AbandonedTask struct {
	Task  int64
	State string // QUEUED, RUNNING, NOTIFIED or WAITING
}

// configV11 reads the v1.1 config keys into c and cfg.
func (c *Conformance) configV11(h traces.Header, cfg *model.Config) error {
	if h.Minor < 1 {
		if c.priority {
			c.prioV10 = true
		}
		return nil
	}
	v := &confV11{}
	c.v11 = v
	switch sp, ok := h.Config["spurious-polls"]; {
	case !ok:
	case sp == 0 || sp == 1:
		v.spurious = sp == 1
	default:
		return fmt.Errorf("spurious-polls = %d: want 0 or 1", sp)
	}
	if us, ok := h.Config["slice-us"]; ok {
		switch {
		case cfg.Policy != model.TimeSlice:
			return fmt.Errorf("slice-us = %d: a time slice is for the timeslice policy", us)
		case us < 1:
			return fmt.Errorf("slice-us = %d: want a number ≥ 1", us)
		case h.Config["slice"] != 0:
			return fmt.Errorf("slice-us and slice: a slice is a count or a time, not both")
		case int64(us) > (1<<63-1)/1000:
			return fmt.Errorf("slice-us = %d: out of range", us)
		}
		v.sliceNs = int64(us) * 1000
		// The model counts re-polls against its slice; the time decides
		// here, so the count never runs out (sliceDecision resets it).
		cfg.Slice = 255
		v.slStart = make([]int64, h.Workers)
		v.slEnd = make([]int64, h.Workers)
	}
	if c.priority {
		v.prioOn = true
		v.aging = h.Config["aging"]
		if v.aging > 255 {
			return fmt.Errorf("aging = %d: want 0 to 255", v.aging)
		}
	}
	v.lastPend = make([]int32, h.Workers)
	return nil
}

// stepV11 checks what v1.1 adds to event e before its rule is applied. It
// reports done for an event that is no rule (a stop, a wake without a
// task).
func (c *Conformance) stepV11(idx int, e *traces.Event) (done bool, err error) {
	v := c.v11
	w, t := int(e.Worker), int(e.Task)
	if v.stopped {
		if e.Kind == traces.KindWake && !v.stopEv.Reason.Crash() && e.Outcome != traces.OutcomeScheduled && e.Outcome != traces.OutcomeNotified {
			// A waker that outlives its executor: legal, and late.
			v.wakesAfter++
			return true, nil
		}
		if e.Kind == traces.KindWake && !v.stopEv.Reason.Crash() {
			return true, c.fail(idx, e, model.WAKE, "a wake after the executor's orderly stop does nothing (late)", fmt.Sprintf("the executor stopped at event %d, and this wake reports %s", v.stopIdx+1, e.Outcome))
		}
		return true, c.fail(idx, e, frame.Rule(e), "no event follows the executor's stop", fmt.Sprintf("the executor stopped at event %d (%s)%s", v.stopIdx+1, v.stopEv.Reason, frame.AfterStopHint(v.stopEv.Reason)))
	}
	if w >= 0 && v.wstopped != nil && v.wstopped[w] {
		return true, c.fail(idx, e, frame.Rule(e), "no event of a worker follows its stop", fmt.Sprintf("worker %d stopped", w))
	}
	if e.Time != 0 && w >= 0 {
		if v.lastTime == nil {
			v.lastTime = make([]int64, len(c.workers))
		}
		if e.Time < v.lastTime[w] {
			return true, c.fail(idx, e, frame.Rule(e), "time is non-decreasing per worker", fmt.Sprintf("worker %d's previous event was at %d ns, this one at %d ns", w, v.lastTime[w], e.Time))
		}
		v.lastTime[w] = e.Time
	}
	if v.sliceNs > 0 && e.Time == 0 && (e.Kind == traces.KindPollBegin || e.Kind == traces.KindPollEnd) {
		return true, c.fail(idx, e, frame.Rule(e), PremiseWellFormed, fmt.Sprintf("%s without a time: with slice-us every poll-begin and poll-end carries its time", e.Kind))
	}
	if e.Future != 0 && w >= 0 && w < len(v.polling) && v.polling[w] != 0 && v.polling[w] != e.Future &&
		(e.Kind == traces.KindPollEnd || e.Kind == traces.KindRegister) {
		return true, c.fail(idx, e, frame.Rule(e), PremiseWellFormed, fmt.Sprintf("%s of future %d in a poll of future %d: one poll drives one future", e.Kind, e.Future, v.polling[w]))
	}
	if e.Future != 0 && t <= len(v.finished) && v.finished[t-1] == e.Future {
		return true, c.fail(idx, e, model.TASK_COMPLETE, "a finished future is never polled again (a retry polls a new future)",
			fmt.Sprintf("t%d re-polls a finished future: future %d already returned; under retry the re-run must use a new future id", t, e.Future))
	}
	if v.prioOn && t != 0 {
		switch {
		case e.Prioritized:
			c.setPriority(t, e.Priority)
		case e.Kind == traces.KindSpawn:
			return true, c.fail(idx, e, model.SPAWN, "a spawn under the priority policy carries the task's priority (v1.1)", fmt.Sprintf("t%d is spawned without a priority", t))
		}
	}
	switch {
	case e.Kind == traces.KindStop:
		if w < 0 {
			v.stopped, v.stopIdx, v.stopEv = true, idx, *e
		} else {
			if cur := c.s.Cur[w]; e.Reason.Crash() && cur != 0 {
				v.lostOn = append(v.lostOn, int64(cur))
			}
			if v.wstopped == nil {
				v.wstopped = make([]bool, len(c.workers))
			}
			v.wstopped[w] = true
			c.workers[w].parked = false // a stopped worker is not parked
		}
		return true, nil
	case e.Kind == traces.KindWake && t == 0:
		v.noTaskWakes++
		return true, nil
	case e.Kind == traces.KindPollEnd && e.Result == traces.ResultError:
		v.nerrors++
		if len(v.errors) < frame.MaxFindings {
			v.errors = append(v.errors, Finding{Index: idx, Seq: e.Seq, Task: e.Task, Worker: w, Msg: fmt.Sprintf("task %d failed (returned an error) on %s", t, frame.Who(w))})
		}
	}
	return false, nil
}

// afterV11 keeps the v1.1 tables once event e conformed.
func (c *Conformance) afterV11(e *traces.Event) {
	v := c.v11
	w, t := int(e.Worker), int(e.Task)
	switch e.Kind {
	case traces.KindTake:
		if v.sliceNs > 0 {
			v.slStart[w] = -1
		}
	case traces.KindPollBegin:
		v.lastPend[w] = 0
		if e.Future != 0 && v.polling == nil {
			v.polling = make([]int64, len(c.workers))
		}
		if v.polling != nil {
			v.polling[w] = e.Future
		}
		if v.sliceNs > 0 && v.slStart[w] < 0 {
			v.slStart[w] = e.Time
		}
	case traces.KindPollEnd:
		if v.polling != nil {
			v.polling[w] = 0
		}
		if v.sliceNs > 0 {
			v.slEnd[w] = e.Time
		}
		if e.Result == traces.ResultPending && c.s.Task[t-1] == model.Waiting {
			v.lastPend[w] = int32(t)
		}
		if e.Future != 0 && e.Result != traces.ResultPending {
			for len(v.finished) < t {
				v.finished = append(v.finished, 0)
			}
			v.finished[t-1] = e.Future
		}
	}
}

func (c *Conformance) setPriority(t int, p int32) {
	v := c.v11
	c.growPriorities(t)
	v.prio[t-1] = p
	c.gq.PriorityChanged(int32(t))
}

// growPriorities makes room for tasks up to t in the priority tables.
func (c *Conformance) growPriorities(t int) {
	v := c.v11
	for len(v.prio) < t {
		v.prio = append(v.prio, 0)
	}
}

// takePriority is GLOBAL-STEAL under the priority policy of a v1.1 trace:
// the task taken must be the model's pick (model.Model's pick and its aging
// update, on the checker's own priorities, with ages counted by the global
// queue's index): O(log n) on n queued tasks.
func (c *Conformance) takePriority(st model.Step, seq uint64) error {
	v := c.v11
	g := c.gq
	t := int32(st.Task)
	if !g.Has(t) {
		return c.apply(st, seq) // the model says why
	}
	// A task spawned by a model step (not a spawn event) has priority 0.
	c.growPriorities(len(c.s.Task))
	if u, aged := g.Pick(v.aging); u != t {
		why := fmt.Sprintf("t%d (priority %d) is first of the highest priority", u, v.prio[u-1])
		if aged {
			why = fmt.Sprintf("t%d was passed over %d times (aging %d) and runs first", u, g.Passed(u, v.aging), v.aging)
		}
		premise := "a take takes the first task of the highest priority"
		if v.aging > 0 {
			premise = "a take takes the first aged task, else the first task of the highest priority"
		}
		c.globalInOrder()
		return &model.PremiseError{Step: st, Premise: premise,
			Reason: fmt.Sprintf("t%d (priority %d, passed over %d times) is taken while %s in the global queue %s", t, v.prio[t-1], g.Passed(t, v.aging), why, tasksOf(c.s.Global))}
	}
	if err := c.takeAnywhere(st, seq); err != nil {
		return err
	}
	g.Took() // every task still queued was passed over once more
	return nil
}

// spuriousRepoll decides a poll-begin of task t by worker w that is idle:
// an in-place re-poll of a task that was not woken when w's last poll was
// of t, returned Pending and w took nothing since. It reports handled
// false for any other poll-begin.
func (c *Conformance) spuriousRepoll(idx int, e *traces.Event) (bool, error) {
	v := c.v11
	w, t := int(e.Worker), int(e.Task)
	if c.s.Cur[w] != 0 || c.s.Task[t-1] != model.Waiting || v.lastPend[w] != int32(t) {
		return false, nil
	}
	if !v.spurious {
		return true, c.fail(idx, e, model.TASK_SUSPEND, "a task whose poll returned Pending is polled again only after a wake",
			fmt.Sprintf("w%d re-polls t%d in place, and no wake came since its poll returned Pending (a spurious poll; an executor that polls tasks that were not woken declares \"spurious-polls\":1 in the header's config)", w, t))
	}
	if err := c.checkSlice(idx, e, w, t); err != nil {
		return true, err
	}
	c.s.Task[t-1] = model.Running
	c.s.Cur[w] = int32(t)
	v.spuriousPolls++
	c.polls++
	return true, nil
}

// busyRequeue is a requeue of a WAITING task under spurious-polls: a WAKE
// by the executor itself onto e.Queue.
func (c *Conformance) busyRequeue(idx int, e *traces.Event) error {
	t := int(e.Task)
	if err := c.checkPush(idx, e, model.WAKE); err != nil {
		return err
	}
	d := c.dest(e)
	if err := c.apply(model.Step{Rule: model.WAKE, Worker: int(e.Worker), Task: t, Victim: -1, Dest: d}, e.Seq); err != nil {
		return c.failStep(idx, e, model.WAKE, err)
	}
	if err := c.checkPlaced(idx, e, model.WAKE, d); err != nil {
		return err
	}
	c.slotPush(e, d)
	c.v11.spuriousPolls++
	return nil
}

// requeueReason says why a requeue of task t is no rule; for a WAITING
// task, how a busy-polling executor declares it.
func (c *Conformance) requeueReason(t int) string {
	s := fmt.Sprintf("t%d is %s and was not re-queued", t, c.s.Task[t-1])
	if c.s.Task[t-1] == model.Waiting {
		s += " (a busy re-queue of a task that was not woken: an executor that does this declares \"spurious-polls\":1 in the config of a v1.1 header)"
	}
	return s
}

// sliceDecision prepares the model for the time-slice decision at the
// end of w's poll of a NOTIFIED task: a re-poll must come while the slice
// lasts (checked on the times), a re-queue is always allowed.
func (c *Conformance) sliceDecision(idx int, e *traces.Event, w, t int, repoll bool) error {
	if c.v11.sliceNs == 0 {
		return nil
	}
	if !repoll {
		c.s.Slice[w] = uint8(c.m.Config().Slice) // spent: the model re-queues
		return nil
	}
	c.s.Slice[w] = 0
	return c.checkSlice(idx, e, w, t)
}

// checkSlice checks a re-poll in place by w of t against the time slice.
func (c *Conformance) checkSlice(idx int, e *traces.Event, w, t int) error {
	v := c.v11
	if v.sliceNs == 0 {
		return nil
	}
	start, end := v.slStart[w], v.slEnd[w]
	if start >= 0 && end-start >= v.sliceNs {
		return c.fail(idx, e, model.TASK_SUSPEND, "a re-poll in place is decided while the slice lasts (poll-end time < slice start + slice-us)",
			fmt.Sprintf("t%d's slice on w%d began at %d ns and its poll ended at %d ns, %d ns later: the slice of %d ns had expired", t, w, start, end, end-start, v.sliceNs))
	}
	return nil
}

// finishV11 fills the v1.1 part of the report; it runs before the verdict
// is decided.
func (c *Conformance) finishV11(r *Report) {
	if c.prioV10 {
		r.PriorityUnchecked = true
	}
	v := c.v11
	if v == nil {
		return
	}
	r.SpuriousPolls, r.NoTaskWakes = v.spuriousPolls, v.noTaskWakes
	r.Errors, r.ErrorCount = v.errors, v.nerrors
	r.WakesAfterStop = v.wakesAfter
	var lost []AbandonedTask
	for _, t := range v.lostOn {
		if c.s.Task[t-1] != model.Done {
			lost = append(lost, AbandonedTask{Task: t, State: c.s.Task[t-1].String()})
		}
	}
	if v.stopped {
		r.Stopped, r.StopIndex, r.StopReason = true, v.stopIdx, v.stopEv.Reason
		for _, t := range r.NeverCompleted {
			a := AbandonedTask{Task: t, State: c.s.Task[t-1].String()}
			if v.stopEv.Reason.Crash() {
				if !slices.Contains(v.lostOn, t) {
					lost = append(lost, a)
				}
			} else if !slices.Contains(v.lostOn, t) {
				r.Abandoned = append(r.Abandoned, a)
			}
		}
		slices.SortStableFunc(r.Abandoned, func(a, b AbandonedTask) int { return strings.Compare(a.State, b.State) })
		r.NeverCompleted, r.LostWakeups = nil, nil
	}
	slices.SortStableFunc(lost, func(a, b AbandonedTask) int { return strings.Compare(a.State, b.State) })
	r.Lost = lost
	if len(lost) > 0 && r.Err == nil {
		e, idx := v.stopEv, v.stopIdx
		if !v.stopped {
			e, idx = traces.Event{Seq: c.fr.LastSeq, Worker: -1, Victim: -1, Kind: traces.KindStop}, c.fr.N-1
		}
		c.fr.FailAt(idx, &e, model.TASK_COMPLETE, "", "a crash loses no task: every spawned task is DONE, or abandoned at an orderly stop",
			fmt.Sprintf("%d tasks were lost in a crash: %s", len(lost), abandonedList(lost)), c.Lanes())
		r.Err = c.fr.Err
	}
}

// summaryV11 adds the v1.1 lines to a report's summary.
func (r *Report) summaryV11(b *strings.Builder) {
	if r.PriorityUnchecked {
		b.WriteString("priority order not checked: a v1.0 trace carries no priorities (a v1.1 trace with priority on its spawns is checked)\n")
	}
	if r.Stopped {
		fmt.Fprintf(b, "the executor stopped at event %d", r.StopIndex+1)
		if r.StopReason.Crash() {
			fmt.Fprintf(b, " (%s: a crash)", r.StopReason)
		}
		if len(r.Lost) > 0 {
			fmt.Fprintf(b, "; %d tasks lost in the crash: %s\n", len(r.Lost), abandonedList(r.Lost))
		} else if len(r.Abandoned) == 0 {
			b.WriteString(" with every task DONE\n")
		} else {
			fmt.Fprintf(b, "; %d tasks abandoned at stop: %s\n", len(r.Abandoned), abandonedList(r.Abandoned))
		}
	}
	if r.WakesAfterStop > 0 {
		fmt.Fprintf(b, "%d wakes after the executor's stop (wakers that outlived it: late)\n", r.WakesAfterStop)
	}
	if r.SpuriousPolls > 0 {
		fmt.Fprintf(b, "%d spurious polls (busy re-queues and in-place re-polls of tasks not woken)\n", r.SpuriousPolls)
	}
	if r.NoTaskWakes > 0 {
		fmt.Fprintf(b, "%d wakes through wakers that name no task\n", r.NoTaskWakes)
	}
	for _, f := range r.Errors {
		fmt.Fprintf(b, "error: %s\n", f)
	}
	if n := r.ErrorCount - len(r.Errors); n > 0 {
		fmt.Fprintf(b, "error: ... and %d more\n", n)
	}
}

// abandonedList lists abandoned tasks by state: "QUEUED t3 t4; WAITING t7".
func abandonedList(a []AbandonedTask) string {
	var groups []string
	for i := 0; i < len(a); {
		j := i
		var ts []int64
		for j < len(a) && a[j].State == a[i].State {
			ts = append(ts, a[j].Task)
			j++
		}
		groups = append(groups, a[i].State+" "+frame.TaskList(ts))
		i = j
	}
	return strings.Join(groups, "; ")
}
