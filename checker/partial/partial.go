package partial

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/checker/internal/frame"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Checker checks a partially observed trace: one whose header lists
// observations the recorder could not make (traces.Header.Unobserved), such
// as a wrapper around the futures of an executor it cannot change, which
// records spawn (no queue), poll-begin and poll-end on the polling worker,
// wake (no outcome) and no take: "unobserved":["take","queue","outcome"].
//
// Such a trace does not say where each task is queued, so it cannot be
// replayed through the model. Checker instead follows each task
// through the states the observed events decide, and checks every premise
// they decide (Rules): no poll after Ready, no concurrent poll of a
// task, one poll at a time per worker, future instances, the waker's
// scheduling guarantee (lost wakeups), no poll without a wake since the
// last Pending, wakes of unknown tasks, and, when observed, wake outcomes
// and takes. Every rule it cannot check is named in the report with the
// reason, derived from the header's unobserved list: never a silent pass.
// When take, source and queue are all observed the trace is also replayed
// through the model (conform.Conformance), which checks the queue rules.
//
// How events map onto a task's observed state:
//
//	spawn                IDLE → READY (spawned)
//	take                 READY → TAKEN(w) (only when take is observed)
//	poll-begin           READY or TAKEN(w) → RUNNING(w); a poll of a
//	                     WAITING task not woken since its last poll began
//	                     is a spurious poll
//	poll-end pending     RUNNING(w) → WAITING, or READY when woken during
//	                     the poll (the executor must poll it again)
//	poll-end ready       RUNNING(w) → DONE
//	poll-end panic/error RUNNING(w) → DONE (FAILED under the retry policy:
//	                     a later poll is its re-run)
//	wake                 WAITING → READY; RUNNING: woken during the poll;
//	                     READY: coalesced; DONE: late; no task: counted
//	requeue              READY stays READY; a WAITING task not woken during
//	                     its poll is a busy re-queue (spurious)
//	stop                 worker -1: every later event is a violation, and
//	                     tasks not DONE are abandoned; worker w: no later
//	                     event of w
//	park, unpark, panic  findings
//
// A wake of a task whose poll returns Pending is honoured by the poll it
// woke only if it came before the poll began; a wake after that must be
// followed by another poll. The fairness figures measure, each time a task
// becomes ready (spawn, or a wake; a wake during a poll counts from the
// poll's end, when the task could first be polled again) until its next
// poll, the delay in ticks (seq), in polls of other tasks, and in time when
// both events carry one.
//
// Cost: O(1) per event, no allocation per event once the task table has
// grown, and memory linear in the largest task id (about 70 bytes per task)
// plus the workers: nothing is kept per event but the last few, for the
// violation's context. Task ids up to conform.MaxTask are accepted. A
// Checker is not safe for concurrent use; its zero value is not
// usable (New).
type Checker struct {
	h        traces.Header
	unTake   bool
	unOut    bool
	unPark   bool
	spurious bool // config spurious-polls = 1
	retry    bool
	retries  int

	replay    *conform.Conformance // the model replay, when the queues are observed
	replayErr error

	report     *Report
	fr         frame.Frame // events seen, the violation, the last events, the findings (package frame)
	stopped    bool        // the whole executor stopped
	stopEv     traces.Event
	wakesAfter int // wakes after an orderly stop (wakers that outlived the executor)
	stopIdx    int

	tasks    []partTask
	finished map[int64][]int64 // under retry: the future instances of a task that failed
	workers  []partWorker
	polls    uint64

	noTask, late, spuriousN, failures int
	wokenAtTake                       int
	spawnD, wakeD                     Delay
	fairBound                         uint64 // SetFairnessBound; 0: none
}

// SetFairnessBound makes a wait of more than polls polls of other tasks,
// from a task's spawn to its first poll or from a wake to its next poll, a
// violation (check "bounded-fairness"): the poll that ends such a wait,
// or, for a task still waiting at the end, Finish. It is the bounded
// fairness of the design (a task ready is polled before a bound of polls
// of others), with the bound given by the caller: a partially observed
// trace's policy may be unknown. 0, the default, reports the figures only.
// Call it before the first Step.
func (c *Checker) SetFairnessBound(polls uint64) { c.fairBound = polls }

// Observed task states (not the model's: READY covers QUEUED whatever the
// queue, and TAKEN a task taken and not yet begun).
const (
	pIdle uint8 = iota
	pReady
	pTaken
	pRunning
	pWaiting
	pFailed // failed under the retry policy: re-run or DONE
	pDone
)

var pStateNames = [...]string{"IDLE (never spawned)", "READY (queued, not yet polled)", "TAKEN", "RUNNING", "WAITING", "FAILED (may be re-run)", "DONE"}

const (
	pWoken     uint8 = 1 << iota // woken after its last poll began, not polled since
	pFromSpawn                   // READY since its spawn
	pFromWake                    // READY since a wake
	// Takes unobserved: a wake while READY, which may have reached the
	// executor only after the take of the poll that follows.
	pWokenAgain
	// The poll running or last ended may have been woken after its take
	// (by a pWokenAgain wake): its next poll needs no wake of its own.
	pWokenAtTake
)

type partTask struct {
	readySeq   uint64
	readyPolls uint64
	readyTime  int64
	future     int64 // the future instance of the current or last poll
	doneFut    int64 // the last finished future instance, 0 if none
	idx        int32 // event index of the last transition
	worker     int32 // the polling worker, for TAKEN and RUNNING
	state      uint8
	flags      uint8
	tries      uint8 // failures re-run (retry policy)
}

type partWorker struct {
	cur      int64 // the task taken or polled, 0 if none
	lastTime int64
	polls    int
	stopped  bool
}

// Delay holds the fairness figures of one kind of wait (from spawn
// to the first poll, or from a wake to the next poll).
type Delay struct {
	Count             int    // waits measured
	MaxTicks          uint64 // the longest, in seq ticks
	MaxTicksTask      int64
	MaxOtherPolls     uint64 // the most polls of other tasks during one wait
	MaxOtherPollsTask int64
	Timed             int   // waits with a time on both ends
	MaxTime, SumTime  int64 // ns, over the timed waits
	MaxTimeTask       int64
	StillWaiting      bool // MaxOtherPolls is of a task still waiting at the end
	StillWaitingTicks bool // so is MaxTicks
}

// MeanTime is the mean of the timed waits, in ns; 0 if none.
func (d Delay) MeanTime() int64 {
	if d.Timed == 0 {
		return 0
	}
	return d.SumTime / int64(d.Timed)
}

func (d *Delay) add(t int64, ticks, other uint64, dt int64, timed, still bool) {
	if !still {
		d.Count++
	}
	if ticks > d.MaxTicks || d.MaxTicksTask == 0 {
		d.MaxTicks, d.MaxTicksTask, d.StillWaitingTicks = ticks, t, still
	}
	if other > d.MaxOtherPolls || d.MaxOtherPollsTask == 0 {
		d.MaxOtherPolls, d.MaxOtherPollsTask, d.StillWaiting = other, t, still
	}
	if timed {
		if !still {
			d.Timed++
			d.SumTime += dt
		}
		if dt > d.MaxTime || d.MaxTimeTask == 0 {
			d.MaxTime, d.MaxTimeTask = dt, t
		}
	}
}

// Abandoned is a task not DONE when the executor stopped.
type Abandoned struct {
	Task  int64  `json:"task"`
	State string `json:"state"`
}

// Report is the result of checking a partially observed trace.
//
// Verdict is Violated when an event breaks a checked rule (Err says which,
// with the events before it); Unknown when every event conforms but some
// task is not DONE at the end and the executor did not stop (LostWakeups
// and NeverCompleted name them), or a limit of the checker was reached;
// Holds otherwise — every checked rule holds, every task is DONE or
// abandoned at a stop. Whatever the verdict, Unchecked names every rule
// the trace did not let the checker check, with the reason.
type Report struct {
	Events  int
	Verdict checker.Verdict
	Err     *conform.Error

	Unobserved []string
	Checked    []string    // names of the Rules checked
	Unchecked  []Unchecked // the rules not checked, with the reasons
	Replayed   bool        // the trace was also replayed through the model

	Tasks     int
	Completed int
	// LostWakeups: tasks not DONE, woken after their last poll began and
	// not polled since, at the end of a trace that did not end in a stop.
	LostWakeups []int64
	// NeverCompleted: spawned tasks not DONE at the end (a superset of
	// LostWakeups), when the executor did not stop.
	NeverCompleted []int64
	// Stopped: the trace ends with a stop of the executor; Abandoned are
	// the tasks not DONE then, with their state.
	Stopped   bool
	Abandoned []Abandoned
	// StopReason is that stop's reason; after a crash (panic, unwound)
	// the tasks not DONE are Lost (a violation), not abandoned.
	// WakesAfterStop counts the wakes after an orderly stop (wakers that
	// outlived the executor: legal, late).
	StopReason     traces.StopReason
	Lost           []Abandoned
	WakesAfterStop int

	Polls         int   // polls begun (or takes, when observed)
	WorkerPolls   []int // per worker
	NoTaskWakes   int   // wakes through a waker naming no task
	LateWakes     int   // wakes of DONE tasks
	SpuriousPolls int   // polls and re-queues of tasks not woken (spurious-polls: 1)
	// WokenAtTake counts polls with no wake since the poll before began,
	// accepted because takes are unobserved and a second wake before that
	// poll may have reached the executor after its take (the executor then
	// owes one more poll).
	WokenAtTake int
	Failures    int // poll-ends panic or error

	SpawnDelay Delay // spawn → first poll
	WakeDelay  Delay // wake → next poll

	Panics     []conform.Finding
	PanicCount int
	Warnings   []conform.Finding
}

// New returns a checker for a partially observed trace with
// header h. It fails on a header it cannot check: a bad format or version,
// an unknown observation in Unobserved, an unknown config key or value. The
// policy may be any model policy, or "unknown".
func New(h traces.Header) (*Checker, error) {
	if err := traces.CheckHeader(h); err != nil {
		return nil, fmt.Errorf("partial check: %w", err)
	}
	if err := checkUnobserved(h.Unobserved); err != nil {
		return nil, fmt.Errorf("partial check: header: %w", err)
	}
	known := append(slices.Clone(frame.ConfigKeys), "spurious-polls", "slice-us")
	for k, v := range h.Config {
		if !slices.Contains(known, k) {
			return nil, fmt.Errorf("partial check: header: unknown config key %q (known: %s)", k, strings.Join(known, ", "))
		}
		if v < 0 {
			return nil, fmt.Errorf("partial check: header: %s = %d: want a number ≥ 0", k, v)
		}
	}
	sp := h.Config["spurious-polls"]
	if sp > 1 {
		return nil, fmt.Errorf("partial check: header: spurious-polls = %d: want 0 or 1", sp)
	}
	switch model.Policy(h.Policy) {
	case model.WorkSteal, model.FIFO, model.Priority, model.TimeSlice, model.Retry, "", "unknown":
	default:
		return nil, fmt.Errorf("partial check: header: unknown policy %q (want one of fifo, worksteal, priority, timeslice, retry, unknown)", h.Policy)
	}
	un := func(o string) bool { return slices.Contains(h.Unobserved, o) }
	c := &Checker{
		h: h, unTake: un(ObsTake), unOut: un(ObsOutcome), unPark: un(ObsPark),
		spurious: sp == 1,
		retry:    model.Policy(h.Policy) == model.Retry, retries: h.Config["retries"],
		workers: make([]partWorker, h.Workers),
	}
	if !un(ObsTake) && !un(ObsSource) && !un(ObsQueue) {
		hr := h
		hr.Unobserved = nil
		c.replay, c.replayErr = conform.New(hr)
		if c.replayErr != nil {
			c.replay = nil
		}
	}
	if c.retry {
		c.finished = map[int64][]int64{}
	}
	return c, nil
}

// errPartialAfterFinish is what Checker.Step returns after Finish.
var errPartialAfterFinish = errors.New("partial check: Step after Finish")

// Step checks the next event. It returns nil, or the *conform.Error of
// the first violation (Rule is the model rule it breaks, 0 for a form
// check; Premise names the Rules entry); once a violation was found
// every later call returns it again. Events must come in Seq order.
func (c *Checker) Step(e traces.Event) error {
	idx, err := c.fr.Begin()
	if err != nil {
		return err
	}
	if err := c.check(idx, &e); err != nil {
		return err
	}
	c.fr.Keep(idx, &e)
	return nil
}

// Events returns how many events Step has been given.
func (c *Checker) Events() int { return c.fr.N }

// Err returns the violation found so far, or nil.
func (c *Checker) Err() *conform.Error { return c.fr.Err }

// check checks event idx, e (the frame numbered it), then, when the
// queues are observed, replays it through the model.
func (c *Checker) check(idx int, e *traces.Event) error {
	if err := c.step(idx, e); err != nil {
		return err
	}
	if c.replay != nil && e.Kind != traces.KindStop && !(e.Kind == traces.KindWake && e.Task == 0) && !(c.stopped && e.Kind == traces.KindWake) {
		re := *e
		if re.Result == traces.ResultError {
			re.Result = traces.ResultPanic // a failed task, to the model
		}
		if err := c.replay.Step(re); err != nil {
			if ce, ok := err.(*conform.Error); ok {
				cp := *ce
				cp.Before = c.fr.Before(idx)
				c.fr.Err = &cp
				return c.fr.Err
			}
			return err
		}
	}
	return nil
}

// fail records the violation of the rule named check at event idx, with
// the observed state of its task and worker.
func (c *Checker) fail(idx int, e *traces.Event, r model.Rule, check, reason string) error {
	return c.fr.FailAt(idx, e, r, "", check, reason, c.stateOf(e))
}

// stateOf describes the observed state of the event's task and worker.
func (c *Checker) stateOf(e *traces.Event) string {
	var lines []string
	if t := e.Task; t > 0 && int(t) <= len(c.tasks) {
		pt := &c.tasks[t-1]
		s := fmt.Sprintf("t%d %s", t, c.taskState(pt))
		if pt.state != pIdle {
			s += fmt.Sprintf(" since event %d", pt.idx+1)
		}
		lines = append(lines, s)
	} else if t > 0 {
		lines = append(lines, fmt.Sprintf("t%d %s", t, pStateNames[pIdle]))
	}
	if w := int(e.Worker); w >= 0 && w < len(c.workers) {
		if cur := c.workers[w].cur; cur != 0 {
			lines = append(lines, fmt.Sprintf("w%d polling t%d", w, cur))
		} else {
			lines = append(lines, fmt.Sprintf("w%d polling nothing", w))
		}
	}
	return strings.Join(lines, "\n")
}

func (c *Checker) taskState(pt *partTask) string {
	switch pt.state {
	case pTaken:
		return fmt.Sprintf("TAKEN by w%d", pt.worker)
	case pRunning:
		s := fmt.Sprintf("RUNNING on w%d", pt.worker)
		if pt.flags&pWoken != 0 {
			s += ", woken during the poll"
		}
		return s
	case pReady:
		if pt.flags&pFromWake != 0 {
			return "READY (woken, not yet polled)"
		}
	}
	return pStateNames[pt.state]
}

func (c *Checker) step(idx int, e *traces.Event) error {
	if idx > 0 && e.Seq <= c.fr.LastSeq {
		return c.fail(idx, e, 0, conform.PremiseWellFormed, frame.SeqReason(e.Seq, c.fr.LastSeq))
	}
	if err := c.validate(e); err != nil {
		return c.fail(idx, e, 0, conform.PremiseWellFormed, err.Error())
	}
	if e.Task > conform.MaxTask {
		return c.fr.TaskLimit(idx, e, 0)
	}
	if c.stopped {
		if e.Kind == traces.KindWake && !c.stopEv.Reason.Crash() && e.Outcome != traces.OutcomeScheduled && e.Outcome != traces.OutcomeNotified {
			c.wakesAfter++ // a waker that outlived its executor: late
			return nil
		}
		return c.fail(idx, e, 0, "stop-is-final", fmt.Sprintf("the executor stopped at event %d (%s)%s", c.stopIdx+1, c.stopEv.Reason, frame.AfterStopHint(c.stopEv.Reason)))
	}
	w := int(e.Worker)
	if w >= 0 {
		cw := &c.workers[w]
		if cw.stopped {
			return c.fail(idx, e, 0, "stop-is-final", fmt.Sprintf("worker %d stopped before", w))
		}
		if e.Time != 0 {
			if e.Time < cw.lastTime {
				return c.fail(idx, e, 0, "time-per-worker", fmt.Sprintf("its time %d ns is before worker %d's previous time %d ns", e.Time, w, cw.lastTime))
			}
			cw.lastTime = e.Time
		}
	}
	t := e.Task
	if t > 0 && int(t) > len(c.tasks) {
		for len(c.tasks) < int(t) {
			c.tasks = append(c.tasks, partTask{worker: -1})
		}
	}
	switch e.Kind {
	case traces.KindSpawn:
		return c.spawn(idx, e)
	case traces.KindTake:
		return c.take(idx, e)
	case traces.KindPollBegin:
		return c.pollBegin(idx, e)
	case traces.KindPollEnd:
		return c.pollEnd(idx, e)
	case traces.KindRegister:
		pt := &c.tasks[t-1]
		if (pt.state != pRunning && pt.state != pTaken) || int(pt.worker) != w {
			return c.fail(idx, e, model.POLL_PENDING, "one-poll-per-worker", fmt.Sprintf("t%d is %s, not polled by worker %d", t, c.taskState(pt), w))
		}
	case traces.KindWake:
		return c.wake(idx, e)
	case traces.KindRequeue:
		return c.requeue(idx, e)
	case traces.KindPark:
		if cur := c.workers[w].cur; cur != 0 {
			c.fr.ParkPolling(idx, e, w, cur)
		}
	case traces.KindPanic:
		c.fr.Panicked(idx, e)
	case traces.KindStop:
		if w < 0 {
			c.stopped, c.stopIdx, c.stopEv = true, idx, *e
		} else {
			c.workers[w].stopped = true
		}
	}
	return nil
}

// validate checks the form of e against the header: traces.Validate for
// what trace format v1 says, the v1.1 forms (a wake naming no task, stop,
// result error, future and time), and no observation the header declares
// unobserved.
func (c *Checker) validate(e *traces.Event) error {
	v := *e
	switch {
	case v.Kind == traces.KindStop:
		if v.Task != 0 {
			return fmt.Errorf("stop event with task %d: a stop is about the executor or a worker", v.Task)
		}
		if v.Worker < -1 || int(v.Worker) >= c.h.Workers {
			return fmt.Errorf("stop event on worker %d: the header declares %d workers", v.Worker, c.h.Workers)
		}
		if v.Source != traces.SourceNone || v.Result != traces.ResultNone || v.Outcome != traces.OutcomeNone || v.Queue != traces.QueueNone {
			return fmt.Errorf("stop event with a source, result, outcome or queue")
		}
		v = traces.Event{Kind: traces.KindPark, Worker: max(v.Worker, 0), Victim: -1} // the rest of the form: as a park's
	case v.Kind == traces.KindWake && v.Task == 0:
		if v.Outcome != traces.OutcomeNone || v.Queue != traces.QueueNone {
			return fmt.Errorf("wake event without a task has an outcome or a queue: a no-op waker schedules nothing")
		}
		v.Task = 1
	case v.Kind == traces.KindStep:
		return fmt.Errorf("step event: a model checker's step is not an observation of an executor")
	}
	if v.Result == traces.ResultError {
		v.Result = traces.ResultPanic
	}
	if err := traces.Validate(c.h, v); err != nil {
		return err
	}
	if e.Future < 0 {
		return fmt.Errorf("future %d: future instances are numbered from 1", e.Future)
	}
	if e.Time < 0 {
		return fmt.Errorf("time %d: want nanoseconds ≥ 0", e.Time)
	}
	switch {
	case c.unTake && e.Kind == traces.KindTake:
		return fmt.Errorf("a take, but the header says takes are unobserved")
	case c.unOut && e.Outcome != traces.OutcomeNone:
		return fmt.Errorf("a wake with outcome %s, but the header says outcomes are unobserved", e.Outcome)
	case c.unPark && (e.Kind == traces.KindPark || e.Kind == traces.KindUnpark):
		return fmt.Errorf("a %s, but the header says parks are unobserved", e.Kind)
	}
	return nil
}

func (c *Checker) spawn(idx int, e *traces.Event) error {
	pt := &c.tasks[e.Task-1]
	if pt.state != pIdle {
		return c.fail(idx, e, model.SPAWN, "spawned-once", fmt.Sprintf("t%d was spawned before and is %s", e.Task, c.taskState(pt)))
	}
	c.ready(idx, pt, e, pFromSpawn)
	return nil
}

// ready makes pt READY at event e, for the fairness figures.
func (c *Checker) ready(idx int, pt *partTask, e *traces.Event, from uint8) {
	pt.state, pt.idx, pt.worker = pReady, int32(idx), -1
	pt.flags = pt.flags&pWoken | from
	pt.readySeq, pt.readyPolls, pt.readyTime = e.Seq, c.polls, e.Time
}

// startPoll checks that task t may start a poll on worker w at event e
// (a take, or a poll-begin not after a take), counts it and measures the
// wait that it ends.
func (c *Checker) startPoll(idx int, e *traces.Event, r model.Rule) error {
	t, w := e.Task, int(e.Worker)
	pt := &c.tasks[t-1]
	if cur := c.workers[w].cur; cur != 0 {
		return c.fail(idx, e, r, "one-poll-per-worker", fmt.Sprintf("worker %d is still polling t%d", w, cur))
	}
	if e.Future != 0 && c.finishedFuture(t, pt, e.Future) {
		return c.fail(idx, e, model.TASK_COMPLETE, "future-instance", fmt.Sprintf("future %d of t%d finished at event %d: it re-polls a finished future (a re-run must use a new future id)", e.Future, t, pt.idx+1))
	}
	switch pt.state {
	case pIdle:
		return c.fail(idx, e, model.SPAWN, "spawned-once", fmt.Sprintf("t%d was never spawned", t))
	case pDone:
		return c.fail(idx, e, model.TASK_COMPLETE, "done-is-final", fmt.Sprintf("t%d is DONE since event %d: a DONE task is never polled again", t, pt.idx+1))
	case pTaken, pRunning:
		return c.fail(idx, e, r, "exclusive-poll", fmt.Sprintf("t%d is %s since event %d: two polls of one task at once", t, c.taskState(pt), pt.idx+1))
	case pFailed:
		if int(pt.tries) >= c.retries {
			return c.fail(idx, e, model.TASK_COMPLETE, "done-is-final", fmt.Sprintf("t%d failed %d times (event %d last): a failed task is run again at most %d times (retries)", t, int(pt.tries)+1, pt.idx+1, c.retries))
		}
		pt.tries++
	case pWaiting:
		switch {
		case pt.flags&pWokenAtTake != 0:
			c.wokenAtTake++
		case !c.spurious:
			return c.fail(idx, e, model.TASK_SUSPEND, "woken-before-poll", fmt.Sprintf("t%d returned Pending at event %d and was not woken since its poll began: a spurious poll (the header may declare spurious-polls: 1)", t, pt.idx+1))
		default:
			c.spuriousN++
		}
	case pReady:
		ticks := e.Seq - pt.readySeq
		other := c.polls - pt.readyPolls
		timed := e.Time != 0 && pt.readyTime != 0
		dt := e.Time - pt.readyTime
		if pt.flags&pFromSpawn != 0 {
			c.spawnD.add(t, ticks, other, dt, timed, false)
		} else if pt.flags&pFromWake != 0 {
			c.wakeD.add(t, ticks, other, dt, timed, false)
		}
		if c.fairBound > 0 && other > c.fairBound && pt.flags&(pFromSpawn|pFromWake) != 0 {
			return c.fail(idx, e, 0, "bounded-fairness", fmt.Sprintf("t%d waited %d polls of other tasks since its %s at event %d: more than the bound of %d", t, other, readySince(pt), pt.idx+1, c.fairBound))
		}
	}
	// A second wake before this poll may have reached the executor after
	// its take (a black-box begin comes after the take): then the executor
	// owes one more poll, which the next one may be.
	pt.flags &= pWokenAgain
	if pt.flags != 0 {
		pt.flags = pWokenAtTake
	}
	pt.worker, pt.idx, pt.future = int32(w), int32(idx), e.Future
	c.workers[w].cur = t
	c.workers[w].polls++
	c.polls++
	return nil
}

func (c *Checker) finishedFuture(t int64, pt *partTask, f int64) bool {
	if f == pt.doneFut {
		return true
	}
	return c.finished != nil && slices.Contains(c.finished[t], f)
}

func (c *Checker) take(idx int, e *traces.Event) error {
	r := frame.Rule(e)
	if r == 0 {
		r = model.POLL_LOCAL
	}
	if err := c.startPoll(idx, e, r); err != nil {
		if c.fr.Err.Premise == "woken-before-poll" {
			c.fr.Err.Premise = "take-of-queued"
			c.fr.Err.Msg = strings.Replace(c.fr.Err.Msg, "(woken-before-poll fails)", "(take-of-queued fails)", 1)
		}
		return err
	}
	c.tasks[e.Task-1].state = pTaken
	return nil
}

func (c *Checker) pollBegin(idx int, e *traces.Event) error {
	t, w := e.Task, int(e.Worker)
	pt := &c.tasks[t-1]
	if pt.state == pTaken && int(pt.worker) == w {
		if e.Future != 0 && c.finishedFuture(t, pt, e.Future) {
			return c.fail(idx, e, model.TASK_COMPLETE, "future-instance", fmt.Sprintf("future %d of t%d finished: it re-polls a finished future (a re-run must use a new future id)", e.Future, t))
		}
		pt.state, pt.idx, pt.future = pRunning, int32(idx), e.Future
		return nil
	}
	if err := c.startPoll(idx, e, 0); err != nil {
		return err
	}
	pt.state = pRunning
	return nil
}

func (c *Checker) pollEnd(idx int, e *traces.Event) error {
	t, w := e.Task, int(e.Worker)
	pt := &c.tasks[t-1]
	r := frame.Rule(e)
	if (pt.state != pRunning && pt.state != pTaken) || int(pt.worker) != w {
		if cur := c.workers[w].cur; cur != 0 && cur != t {
			return c.fail(idx, e, r, "one-poll-per-worker", fmt.Sprintf("worker %d is polling t%d, not t%d", w, cur, t))
		}
		return c.fail(idx, e, r, "one-poll-per-worker", fmt.Sprintf("t%d is %s, not polled by worker %d", t, c.taskState(pt), w))
	}
	if e.Future != 0 && pt.future != 0 && e.Future != pt.future {
		return c.fail(idx, e, r, "future-instance", fmt.Sprintf("the poll began future %d of t%d, not future %d", pt.future, t, e.Future))
	}
	c.workers[w].cur = 0
	f := cmpOr(e.Future, pt.future)
	switch e.Result {
	case traces.ResultPending:
		if pt.flags&pWoken != 0 {
			c.ready(idx, pt, e, pFromWake) // woken during the poll: ready from its end
		} else {
			pt.state, pt.idx, pt.worker = pWaiting, int32(idx), -1
		}
	case traces.ResultReady:
		pt.state, pt.idx, pt.worker, pt.flags, pt.doneFut = pDone, int32(idx), -1, 0, f
	default: // panic, error
		c.failures++
		pt.state, pt.idx, pt.worker, pt.flags = pDone, int32(idx), -1, 0
		if c.retry {
			pt.state = pFailed
			if f != 0 {
				if pt.doneFut != 0 {
					c.finished[t] = append(c.finished[t], pt.doneFut)
				}
			}
		}
		pt.doneFut = f
	}
	return nil
}

func cmpOr(a, b int64) int64 {
	if a != 0 {
		return a
	}
	return b
}

func (c *Checker) wake(idx int, e *traces.Event) error {
	t := e.Task
	if t == 0 {
		c.noTask++
		return nil
	}
	pt := &c.tasks[t-1]
	if pt.state == pIdle {
		return c.fail(idx, e, model.WAKE, "wake-of-spawned", fmt.Sprintf("t%d was never spawned", t))
	}
	if e.Outcome != traces.OutcomeNone {
		var want []traces.Outcome
		switch pt.state {
		case pWaiting:
			want = []traces.Outcome{traces.OutcomeScheduled}
		case pTaken, pRunning:
			want = []traces.Outcome{traces.OutcomeNotified}
		case pReady:
			want = []traces.Outcome{traces.OutcomeCoalesced}
			if c.unTake {
				want = append(want, traces.OutcomeNotified) // it may have been taken
			}
		case pFailed:
			want = []traces.Outcome{traces.OutcomeLate, traces.OutcomeCoalesced}
		case pDone:
			want = []traces.Outcome{traces.OutcomeLate}
		}
		if !slices.Contains(want, e.Outcome) {
			names := make([]string, len(want))
			for i, o := range want {
				names[i] = o.String()
			}
			return c.fail(idx, e, model.WAKE, "wake-outcome", fmt.Sprintf("t%d is %s, so the outcome is %s", t, c.taskState(pt), strings.Join(names, " or ")))
		}
	}
	switch pt.state {
	case pWaiting:
		pt.flags |= pWoken
		c.ready(idx, pt, e, pFromWake)
	case pTaken, pRunning:
		pt.flags |= pWoken
	case pReady:
		if c.unTake && e.Outcome == traces.OutcomeNone {
			pt.flags |= pWokenAgain
		}
	case pDone, pFailed:
		c.late++
	}
	return nil
}

func (c *Checker) requeue(idx int, e *traces.Event) error {
	t := e.Task
	pt := &c.tasks[t-1]
	switch pt.state {
	case pReady:
		return nil // woken during its poll: the re-queue the rule asks for
	case pFailed:
		if int(pt.tries) >= c.retries {
			return c.fail(idx, e, model.TASK_COMPLETE, "done-is-final", fmt.Sprintf("t%d failed %d times: a failed task is run again at most %d times (retries)", t, int(pt.tries)+1, c.retries))
		}
		return nil // its re-run: counted at its poll
	case pWaiting:
		if !c.spurious {
			return c.fail(idx, e, model.TASK_SUSPEND, "woken-before-poll", fmt.Sprintf("t%d returned Pending at event %d and was not woken during its poll: a busy re-queue (the header may declare spurious-polls: 1)", t, pt.idx+1))
		}
		c.spuriousN++
		c.ready(idx, pt, e, 0)
		return nil
	case pDone:
		return c.fail(idx, e, model.TASK_COMPLETE, "done-is-final", fmt.Sprintf("t%d is DONE since event %d", t, pt.idx+1))
	}
	return c.fail(idx, e, model.TASK_SUSPEND, "one-poll-per-worker", fmt.Sprintf("t%d is %s: a re-queue follows the end of a poll", t, c.taskState(pt)))
}

// Finish ends the trace and reports. Calling it again returns the same
// report; Step after Finish is an error.
func (c *Checker) Finish() *Report {
	if c.report != nil {
		return c.report
	}
	r := &Report{
		Events: c.fr.N, Err: c.fr.Err, Unobserved: slices.Clone(c.h.Unobserved),
		Replayed: c.replay != nil, Stopped: c.stopped,
		Polls: int(c.polls), NoTaskWakes: c.noTask, LateWakes: c.late, SpuriousPolls: c.spuriousN, WokenAtTake: c.wokenAtTake, Failures: c.failures,
		Panics: c.fr.Panics, PanicCount: c.fr.NPanics, Warnings: c.fr.Warnings,
	}
	r.Checked, r.Unchecked = partialScope(c.h, c.replayErr)
	for _, w := range c.workers {
		r.WorkerPolls = append(r.WorkerPolls, w.polls)
	}
	if c.fr.Err == nil && c.replay != nil {
		// The model's end-of-trace checks (invariants), and its warnings.
		rr := c.replay.Finish()
		if rr.Err != nil && rr.Verdict == checker.Violated {
			c.fr.Err = rr.Err
			r.Err = rr.Err
		}
		for _, w := range rr.Warnings {
			if len(r.Warnings) < frame.MaxFindings && !strings.Contains(w.Msg, "parks while polling") {
				r.Warnings = append(r.Warnings, w)
			}
		}
	}
	var endTime int64
	for _, w := range c.workers {
		endTime = max(endTime, w.lastTime)
	}
	for i := range c.tasks {
		pt := &c.tasks[i]
		t := int64(i + 1)
		if pt.state == pIdle {
			continue
		}
		r.Tasks++
		if pt.state == pDone || pt.state == pFailed {
			r.Completed++
			continue
		}
		if pt.state == pReady {
			// Its wait so far, so that a task that starves shows.
			other := c.polls - pt.readyPolls
			ticks := c.fr.LastSeq - pt.readySeq
			dt, timed := endTime-pt.readyTime, endTime != 0 && pt.readyTime != 0
			d := &c.wakeD
			if pt.flags&pFromSpawn != 0 {
				d = &c.spawnD
			}
			if pt.flags&(pFromSpawn|pFromWake) != 0 {
				d.add(t, ticks, other, dt, timed, true)
			}
		}
		if c.stopped && c.stopEv.Reason.Crash() {
			r.Lost = append(r.Lost, Abandoned{Task: t, State: c.taskState(pt)})
			continue
		}
		if c.stopped {
			r.Abandoned = append(r.Abandoned, Abandoned{Task: t, State: c.taskState(pt)})
			continue
		}
		r.NeverCompleted = append(r.NeverCompleted, t)
		if pt.flags&pWoken != 0 {
			r.LostWakeups = append(r.LostWakeups, t)
		}
	}
	r.SpawnDelay, r.WakeDelay = c.spawnD, c.wakeD
	if c.fairBound > 0 {
		r.Checked = append(r.Checked, "bounded-fairness")
		if c.fr.Err == nil {
			c.starvedAtEnd()
			r.Err = c.fr.Err
		}
	}
	r.StopReason, r.WakesAfterStop = c.stopEv.Reason, c.wakesAfter
	if len(r.Lost) > 0 && r.Err == nil {
		names := make([]string, len(r.Lost))
		for i, a := range r.Lost {
			names[i] = fmt.Sprintf("t%d (%s)", a.Task, a.State)
		}
		e := c.stopEv
		c.fr.FailAt(c.stopIdx, &e, model.TASK_COMPLETE, "", "lost-at-crash", fmt.Sprintf("%d tasks were lost in a crash (stop, reason %s): %s", len(r.Lost), c.stopEv.Reason, strings.Join(names, ", ")), "")
		r.Err = c.fr.Err
	}
	r.Verdict = c.fr.Verdict(len(r.NeverCompleted))
	c.report, c.fr.Closed = r, errPartialAfterFinish
	return r
}

// readySince names what made a READY task ready: its spawn or a wake.
func readySince(pt *partTask) string {
	if pt.flags&pFromSpawn != 0 {
		return "spawn"
	}
	return "wake"
}

// starvedAtEnd, with a fairness bound, fails on the task still READY at
// the end that waited the most polls of other tasks, if that is more
// than the bound: the violation is at the trace's last event.
func (c *Checker) starvedAtEnd() {
	var worst int
	var most uint64
	for i := range c.tasks {
		pt := &c.tasks[i]
		if pt.state == pReady && pt.flags&(pFromSpawn|pFromWake) != 0 && c.polls-pt.readyPolls > most {
			worst, most = i+1, c.polls-pt.readyPolls
		}
	}
	last, ok := c.fr.Last()
	if most <= c.fairBound || !ok {
		return
	}
	pt := &c.tasks[worst-1]
	c.fail(c.fr.N-1, &last, 0, "bounded-fairness", fmt.Sprintf("t%d, ready since its %s at event %d, waited %d polls of other tasks and was not polled by the end: more than the bound of %d", worst, readySince(pt), pt.idx+1, most, c.fairBound))
}

// Summary returns the lines a person reads: the verdict, the violation or
// the counts, the fairness figures, and every rule not checked, with the
// reason.
func (r *Report) Summary() string {
	var b strings.Builder
	holds := fmt.Sprintf("every checked rule holds: %d events, %d tasks, all DONE", r.Events, r.Tasks)
	if r.Stopped && len(r.Abandoned) > 0 {
		holds = fmt.Sprintf("every checked rule holds: %d events, %d tasks, %d DONE, %d abandoned when the executor stopped", r.Events, r.Tasks, r.Completed, len(r.Abandoned))
	}
	frame.WriteOutcome(&b, r.Verdict, r.Err, frame.OutcomeLines{
		Holds:   holds,
		NotDone: fmt.Sprintf("every checked rule holds, but %d of %d tasks are not DONE at the end", len(r.NeverCompleted), r.Tasks),
		Lost:    "woken after their last poll began, never polled again, not DONE",
	}, r.LostWakeups, r.NeverCompleted)
	if len(r.Abandoned) > 0 {
		b.WriteString("abandoned at stop:")
		for i, a := range r.Abandoned {
			if i == 20 {
				fmt.Fprintf(&b, " … (%d in all)", len(r.Abandoned))
				break
			}
			fmt.Fprintf(&b, " t%d %s;", a.Task, a.State)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "polls: %d (per worker: %s); wakes naming no task: %d; late wakes: %d; spurious polls: %d; failed polls: %d\n",
		r.Polls, intList(r.WorkerPolls), r.NoTaskWakes, r.LateWakes, r.SpuriousPolls, r.Failures)
	if r.WokenAtTake > 0 {
		fmt.Fprintf(&b, "polls owed to a wake that may have reached the executor after the take before them: %d\n", r.WokenAtTake)
	}
	writeDelay(&b, "spawn → first poll", r.SpawnDelay)
	writeDelay(&b, "wake → next poll", r.WakeDelay)
	frame.WriteFindings(&b, r.Panics, r.PanicCount, r.Warnings)
	fmt.Fprintf(&b, "unobserved: %s; checked: %s\n", strings.Join(r.Unobserved, ", "), strings.Join(r.Checked, ", "))
	fmt.Fprintf(&b, "not checked (%d rules):\n", len(r.Unchecked))
	for _, u := range r.Unchecked {
		fmt.Fprintf(&b, "  - %s\n", u)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func writeDelay(b *strings.Builder, what string, d Delay) {
	if d.Count == 0 && d.MaxOtherPollsTask == 0 {
		fmt.Fprintf(b, "fairness, %s: no wait measured\n", what)
		return
	}
	still := ""
	if d.StillWaiting {
		still = ", still waiting at the end"
	}
	fmt.Fprintf(b, "fairness, %s: %d waits; at most %d polls of other tasks (t%d%s); at most %d ticks (t%d)",
		what, d.Count, d.MaxOtherPolls, d.MaxOtherPollsTask, still, d.MaxTicks, d.MaxTicksTask)
	if d.MaxTimeTask != 0 {
		fmt.Fprintf(b, "; at most %d ns (t%d), mean %d ns over %d timed waits", d.MaxTime, d.MaxTimeTask, d.MeanTime(), d.Timed)
	} else {
		b.WriteString("; no times recorded")
	}
	b.WriteString("\n")
}

// intList lists the numbers xs, the first 16 of them (one per worker).
func intList(xs []int) string { return frame.List(xs, 16, "", " … (%d workers)") }

// Check checks a whole partially observed trace, as conform.Check
// does a fully observed one. A read error stops the check: it returns the
// report on the events before it and the error.
func Check(h traces.Header, events iter.Seq2[traces.Event, error]) (*Report, error) {
	c, err := New(h)
	return frame.CheckAll(c, err, events)
}
