package conform

import (
	"errors"
	"fmt"
	"github.com/execspec/execspec/checker/conform/internal/globalq"
	"github.com/execspec/execspec/checker/conform/internal/interval"
	"iter"
	"slices"
	"sort"
	"strings"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/internal/frame"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Conformance replays a recorded trace through the open model of its
// header's policy: every event must be an enabled instance of its rule in the
// current state. Feed it the events in Seq order with Step; the first event
// that is not an enabled rule is the violation, reported as a
// *Error with the rule, the premise that failed, the model state
// and the events before it. Finish reports what only the whole trace shows:
// lost wakeups, tasks never completed, the fairness figures, and warnings.
//
// How events map onto the model's rules (model.Rule):
//
//	spawn                SPAWN onto e.Queue
//	take                 POLL-LOCAL (source local or lifo), GLOBAL-STEAL
//	                     (global), WORKER-STEAL (steal, from e.Victim)
//	poll-begin           no rule: the worker must be RUNNING the task
//	register             POLL-PENDING (conform_register.go)
//	poll-end pending     POLL-PENDING (the future registered its waker),
//	                     then TASK-SUSPEND; with the time-slice policy a
//	                     poll-begin of the same task on the same worker with
//	                     no take between is TASK-SUSPEND's re-poll
//	poll-end ready       TASK-COMPLETE
//	poll-end panic       TASK-COMPLETE of a failed future: DONE, or re-queued
//	                     on the global queue by the retry policy; so is
//	                     poll-end error (v1.1), counted apart
//	wake                 WAKE onto e.Queue, after checking that the reported
//	                     outcome is model.WakeOutcome of the task's state
//	requeue              no rule: the TASK-SUSPEND (NOTIFIED) or retry just
//	                     applied must have put the task where e.Queue says
//	park, unpark, panic  no rule: findings (see Report)
//	stop, wake without   no rule (v1.1): the end of the executor or of a
//	a task               worker; a no-op waker, counted (conform_v11.go)
//	step                 the rule e.Rule, as a model checker writes it; a
//	                     WORKER-STEAL step with a queue is only a look at
//	                     that queue (the first half of a two-step steal):
//	                     no rule
//
// Three choices the mapping makes. A wake during a poll is WAKE (RUNNING →
// NOTIFIED) without a POLL-PENDING before it: a future may be woken during
// its poll and still return Ready, which a registration in that poll would
// forbid; the registration is applied at the poll's Pending end. Under the
// time-slice policy the end of a poll of a NOTIFIED task is decided by the
// worker's next event (a poll-begin of the same task is the re-poll,
// anything else the re-queue). Under the retry policy a failure followed by
// a requeue of the task is re-run (at most retries times, the header's
// bound), and a failure followed by anything else is DONE: an executor may
// give a task a smaller budget of its own, or none.
//
// Relaxed premises. A real executor cannot test some premises in the same
// atomic step as its take, and a correct one must not be reported for it.
// These two premises are accepted when they held at some instant between
// the moment the worker began to look for work and the take, rather than at
// e.Seq. The worker began to look at its take's call tick e.Call, or, if
// that is later, right after its previous event (an executor may draw the
// call tick of the queue operation that succeeded, after other looks that
// found nothing):
//   - WORKER-STEAL's "global = ∅": a push onto the global queue from
//     another thread may land between the thief's look at the global queue
//     and its steal;
//   - POLL-LOCAL's "no global check due": a push onto the empty global
//     queue may land between the look that found it empty on a
//     global-check take and the local take that followed.
//
// Both read only the global queue, the one queue any thread pushes to; a
// worker's local queue is pushed to only by its owner, so no premise about
// it is relaxed. A take without a call tick (Call = 0) is checked at its Seq:
// nothing then says when the worker looked.
// Report.Relaxed counts the takes accepted this way.
// Under the header's "order":"intervals" (lock-free recording) these
// premises generalise to any order of overlapping queue operations the
// intervals allow, with obligations checked later (package interval).
//
// Under the priority policy a v1.0 trace does not say each task's priority,
// so the order of the global queue is not checked: a take of any task in it
// is accepted (the model is the single-queue policy), the fairness figures
// show how long tasks waited, and the report says the order was unchecked.
// A v1.1 trace carries priorities, and its takes are checked as the model's
// pick, with aging. What else format v1.1 adds — stops, spurious polls,
// future instances, time slices — is in conform_v11.go.
//
// A LIFO slot (config lifo-slot=1) is a place of its own: the slot's task
// is invisible to steals and to takes from the local queue, and a take from
// the slot sees only it.
//
// Parks are no rule. One event cannot show a lost wake between a worker's
// last look at the queues and its park: in a concurrent executor a push may
// land just before the park and be followed by the unpark it causes. So a
// park is reported, as a warning, only when the worker parked while its own
// local queue or the global queue held tasks, that queue stayed non-empty
// (a parked worker's own local queue can only shrink; the global queue's
// emptiness is tracked), and the worker never unparked before the end of
// the trace. A park during a poll is a warning too.
//
// Task ids are the model's task ids, so model messages name the trace's
// tasks; ids up to MaxTask are accepted.
//
// Cost: O(1) per event for every policy but priority (a take from the
// global queue costs O(log n) on n queued tasks, package globalq) and
// steal-half (moves half a queue), and no allocation per event once the
// tables have grown: the model's invariants are checked
// after every event while the state is small, and, on larger states, every
// so many events that their cost stays a small constant per event, and at
// the end. A Conformance is not safe for concurrent use; its zero value is
// not usable (New).
type Conformance struct {
	h   traces.Header
	m   *model.Model
	s   *model.State
	cap int // the model's local capacity; 0 = no local queues

	priority bool           // priority policy: takes from anywhere in the global queue
	gq       *globalq.Index // the global queue's index, for takes from anywhere in it (priority, order intervals); else nil
	slotOn   bool           // lifo-slot=1
	slices   bool           // time-slice policy: poll-end pending may be a re-poll
	retry    bool           // retry policy

	v11     *confV11 // format v1.1 (conform_v11.go); nil for a v1.0 trace
	prioV10 bool     // policy priority in a v1.0 trace: order unchecked

	report *Report
	fr     frame.Frame // events seen, the violation, the last events, the findings (package frame)

	tasks   []confTask   // indexed by task id - 1
	live    [][]confLive // pages of slots of tasks QUEUED or awaiting a requeue event
	nlive   int          // slots allocated
	free    []int32      // recycled slots (index+1)
	workers []confWorker // indexed by worker
	npend   int          // workers with a deferred decision

	polls    uint64 // polls so far: takes and re-polls
	maxOther uint64
	maxOTask int64
	maxDelay uint64
	maxDTask int64
	relaxed  int

	globalSince uint64 // Seq of the event that last made the global queue non-empty
	globalEpoch uint64 // times the global queue became empty
	globalFull  bool   // the global queue was non-empty after the last event

	iv *interval.Reader // order "intervals" (package interval); nil under order "seq"
	sr *confSearch      // the search over readings of batch steals (conform_interval_batch_search.go); nil without steal-half

	invEvery int // check invariants every invEvery events (adapts to the state's size)
	invCount int
}

// confTask is what the checker keeps for every task id: 8 bytes, so that a
// trace of millions of tasks is checked in little memory. What only a task
// that is QUEUED or awaiting its requeue event needs lives in a confLive
// slot, allocated while either flag is set and recycled after.
type confTask struct {
	live  int32 // index+1 of the task's confLive slot; 0 = none
	flags uint8
}

type confLive struct {
	readyPolls uint64       // polls when the task last became QUEUED
	readySeq   uint64       // Seq when it last became QUEUED
	requeue    traces.Queue // where the last re-queueing transition put it
}

// confPage is how many confLive slots are allocated at a time: pages, not
// one slice, so that growing never copies (nor holds twice) millions of
// slots.
const confPage = 4096

// liveOf returns ct's slot, allocating one.
func (c *Conformance) liveOf(ct *confTask) *confLive {
	if ct.live == 0 {
		if n := len(c.free); n > 0 {
			ct.live = c.free[n-1]
			c.free = c.free[:n-1]
		} else {
			if c.nlive%confPage == 0 {
				c.live = append(c.live, make([]confLive, confPage))
			}
			c.nlive++
			ct.live = int32(c.nlive)
		}
	}
	return c.slot(ct)
}

// slot returns ct's slot, which it has.
func (c *Conformance) slot(ct *confTask) *confLive {
	i := int(ct.live - 1)
	return &c.live[i/confPage][i%confPage]
}

// clearFlags clears flags of ct and recycles its slot when nothing needs it.
func (c *Conformance) clearFlags(ct *confTask, flags uint8) {
	ct.flags &^= flags
	if ct.live != 0 && ct.flags&(confReady|confRequeue) == 0 {
		*c.slot(ct) = confLive{}
		c.free = append(c.free, ct.live)
		ct.live = 0
	}
}

const (
	confReady   uint8 = 1 << iota // QUEUED and not yet taken since
	confWoken                     // woken (scheduled or notified), not polled since
	confRequeue                   // a re-queueing transition awaits its requeue event
)

// A deferred decision about the end of a worker's poll that the next event
// of that worker or task settles.
const (
	confNone    uint8 = iota
	confSuspend       // poll-end pending of a NOTIFIED task: re-poll or re-queue?
	confFailed        // poll-end panic under the retry policy: retried or DONE?
)

type confWorker struct {
	lastSeq  uint64 // Seq of the worker's last event
	pendTask int32  // task of the deferred decision
	pend     uint8
	parked   bool
	parkIdx  int    // event index of the park
	parkSeq  uint64 // its Seq
	parkG    bool   // the global queue was non-empty at the park
	parkL    bool   // the local queue was non-empty at the park
	parkEp   uint64 // globalEpoch at the park
	slot     int32  // the task in the LIFO slot, 0 = empty
}

// Report is the result of checking a whole trace.
//
// Verdict is Violated when an event is not an enabled rule (Err says
// which); Unknown when every event conforms but some task is not DONE at the
// end (a finite trace cannot tell a task that would never finish from one
// that had not finished yet: LostWakeups and NeverCompleted name them);
// Holds when every event conforms and every spawned task is DONE.
type Report struct {
	Events  int
	Verdict checker.Verdict
	Err     *Error

	Tasks     int // tasks spawned
	Completed int // tasks DONE at the end

	// LostWakeups are the tasks woken (scheduled or notified) and never
	// polled afterwards, and not DONE at the end.
	LostWakeups []int64
	// NeverCompleted are the spawned tasks not DONE at the end (a superset
	// of LostWakeups).
	NeverCompleted []int64

	// Fairness: for each time a task became QUEUED (spawn, wake, re-queue),
	// the polls of other tasks before its take, and the Seq delay.
	MaxOtherPolls     int
	MaxOtherPollsTask int64
	MaxDelay          uint64
	MaxDelayTask      int64
	// StillWaiting: the task of MaxOtherPolls was still QUEUED at the end
	// of the trace, so its figure is how long it had waited so far (a task
	// that starves shows here rather than not at all).
	StillWaiting bool

	// Relaxed counts takes whose premise was accepted at an instant of
	// [Call, Seq] rather than at Seq (see Conformance).
	Relaxed int
	// Reordered counts takes accepted, under order "intervals", by an
	// order of overlapping queue operations other than their Seq order
	// (see package interval).
	Reordered int
	// Reread counts the takes the search over readings of batch steals
	// read otherwise than the checker's first reading (steal-half under
	// order "intervals"), and Replays the replays it ran to find them
	// (conform_interval_batch_search.go).
	Reread, Replays int

	Panics     []Finding // panic events, the first 100
	PanicCount int       // panic events in all
	Warnings   []Finding // parks that left work behind, parks during a poll

	V11 // what format v1.1 adds (conform_v11.go)
}

// Summary returns a few lines a person reads: the verdict, the violation or
// the counts, the fairness figures, the findings.
func (r *Report) Summary() string {
	var b strings.Builder
	holds := fmt.Sprintf("conforms: %d events, %d tasks, all DONE", r.Events, r.Tasks)
	if len(r.Abandoned) > 0 {
		holds = fmt.Sprintf("conforms: %d events, %d tasks, %d DONE, the rest abandoned at the executor's stop", r.Events, r.Tasks, r.Completed)
	}
	frame.WriteOutcome(&b, r.Verdict, r.Err, frame.OutcomeLines{
		Holds:   holds,
		NotDone: fmt.Sprintf("every event conforms, but %d of %d tasks are not DONE at the end", len(r.NeverCompleted), r.Tasks),
		Lost:    "woken, never polled again, not DONE",
	}, r.LostWakeups, r.NeverCompleted)
	still := ""
	if r.StillWaiting {
		still = ", still waiting at the end"
	}
	fmt.Fprintf(&b, "fairness: at most %d polls of other tasks between ready and poll (t%d%s); largest delay %d ticks (t%d)\n",
		r.MaxOtherPolls, r.MaxOtherPollsTask, still, r.MaxDelay, r.MaxDelayTask)
	if r.Relaxed > 0 {
		fmt.Fprintf(&b, "%d takes accepted with a premise that held between the call and the take\n", r.Relaxed)
	}
	if r.Reordered > 0 {
		fmt.Fprintf(&b, "%d takes accepted in an order of overlapping queue operations other than seq order\n", r.Reordered)
	}
	if r.Replays > 0 {
		fmt.Fprintf(&b, "takes the search over batch steals read otherwise than first read: %d (%d replays of the trace)\n", r.Reread, r.Replays)
	}
	r.summaryV11(&b)
	frame.WriteFindings(&b, r.Panics, r.PanicCount, r.Warnings)
	return strings.TrimSuffix(b.String(), "\n")
}

// confKeyPolicy names the policy whose parameter each policy-specific
// config key is: under another policy the key means nothing, and is
// refused rather than ignored.
var confKeyPolicy = map[string]model.Policy{
	"local-cap": model.WorkSteal, "owner-lifo": model.WorkSteal, "steal-half": model.WorkSteal, "steal-max": model.WorkSteal, "global-interval": model.WorkSteal,
	"lifo-slot": model.WorkSteal, "lifo-max": model.WorkSteal,
	"aging": model.Priority, "max-priority": model.Priority,
	"slice": model.TimeSlice, "slice-us": model.TimeSlice,
	"retries": model.Retry,
}

// New returns a checker for a trace with header h. It fails on a
// header the model cannot check: a bad format or version, an unknown
// policy, an unknown or out-of-range config key.
func New(h traces.Header) (*Conformance, error) {
	if err := traces.CheckHeader(h); err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	cfg, c, err := confConfig(h)
	if err == nil {
		err = c.configV11(h, &cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("conformance: header: %w", err)
	}
	m, err := model.NewOpenTrace(cfg)
	if err != nil {
		return nil, fmt.Errorf("conformance: header: %w", err)
	}
	c.h = h
	c.m = m
	c.s = m.Init()
	c.cap = m.Config().LocalCap
	c.workers = make([]confWorker, h.Workers)
	c.invEvery = 1
	intervals := h.Order == traces.OrderIntervals
	if c.priority || intervals {
		prio := c.v11 != nil && c.v11.prioOn
		c.gq = globalq.New(prio, intervals)
		if prio {
			c.gq.SetPriorities(&c.v11.prio)
		}
	}
	if intervals {
		c.iv = interval.New(ivHost{c}, c.s, m, c.gq, c.priority, c.slotOn)
		if m.Config().StealHalf {
			c.sr = newConfSearch()
		}
	}
	return c, nil
}

// confConfig maps a header onto a model configuration.
func confConfig(h traces.Header) (model.Config, *Conformance, error) {
	c := &Conformance{}
	cfg := model.Config{Workers: h.Workers}
	for k, v := range h.Config {
		if !slices.Contains(frame.ConfigKeys, k) {
			return cfg, nil, fmt.Errorf("unknown config key %q (known: %s)", k, strings.Join(frame.ConfigKeys, ", "))
		}
		if v < 0 {
			return cfg, nil, fmt.Errorf("%s = %d: want a number ≥ 0", k, v)
		}
		policy := model.Policy(h.Policy)
		if policy == "" {
			policy = model.WorkSteal
		}
		if owner, ok := confKeyPolicy[k]; ok && owner != policy {
			return cfg, nil, fmt.Errorf("%s is a parameter of policy %s, and means nothing under policy %s", k, owner, policy)
		}
	}
	flag := func(k string, def bool) (bool, error) {
		v, ok := h.Config[k]
		switch {
		case !ok:
			return def, nil
		case v == 0 || v == 1:
			return v == 1, nil
		}
		return false, fmt.Errorf("%s = %d: want 0 or 1", k, v)
	}
	switch model.Policy(h.Policy) {
	case model.WorkSteal, "": // the model's default policy
		cfg.Policy = model.WorkSteal
		cfg.LocalCap = model.MaxOpenLocalCap
		if v, ok := h.Config["local-cap"]; ok {
			if v == 0 {
				return cfg, nil, fmt.Errorf("local-cap = 0: a work-stealing executor has local queues")
			}
			cfg.LocalCap = v
		}
		lifo, err := flag("owner-lifo", true)
		if err != nil {
			return cfg, nil, err
		}
		cfg.OwnerFIFO = !lifo
		if cfg.StealHalf, err = flag("steal-half", false); err != nil {
			return cfg, nil, err
		}
		if cfg.StealLast, err = flag("steal-last", false); err != nil {
			return cfg, nil, err
		}
		if cfg.StealLast && !cfg.StealHalf {
			return cfg, nil, fmt.Errorf("steal-last = 1 without steal-half = 1: a batch steal runs its last task")
		}
		cfg.StealMax = h.Config["steal-max"]
		if cfg.StealMax > 0 && !cfg.StealHalf {
			return cfg, nil, fmt.Errorf("steal-max = %d without steal-half = 1: the cap is on a batch steal", cfg.StealMax)
		}
		if c.slotOn, err = flag("lifo-slot", false); err != nil {
			return cfg, nil, err
		}
		if c.slotOn {
			if cfg.LocalCap < model.MaxOpenLocalCap {
				cfg.LocalCap++ // the model's local queue holds the slot's task too
			}
		}
		cfg.GlobalInterval = h.Config["global-interval"]
	case model.FIFO:
		cfg.Policy = model.FIFO
	case model.Priority:
		// The order of the queue is not checked (no priorities in a
		// trace): the single-queue model, with takes from anywhere.
		cfg.Policy = model.FIFO
		c.priority = true
	case model.TimeSlice:
		cfg.Policy = model.TimeSlice
		cfg.Slice = h.Config["slice"]
		c.slices = true
	case model.Retry:
		cfg.Policy = model.Retry
		cfg.Retries = h.Config["retries"]
		c.retry = true
	default:
		return cfg, nil, fmt.Errorf("unknown policy %q (want one of fifo, worksteal, priority, timeslice, retry)", h.Policy)
	}
	return cfg, c, nil
}

// Lanes returns the current model state: the global queue, each worker with
// its local queue, one line each, then every spawned task's state.
func (c *Conformance) Lanes() string {
	c.globalInOrder()
	s := c.s.String()
	for w := range c.workers {
		if t := c.workers[w].slot; t != 0 {
			s += fmt.Sprintf("\nw%d LIFO slot t%d", w, t)
		}
	}
	return s
}

// errConfAfterFinish is what Conformance.Step returns after Finish.
var errConfAfterFinish = errors.New("conformance: Step after Finish")

// afterEvent keeps the global queue's history: when it last became
// non-empty, and how often it became empty.
func (c *Conformance) afterEvent(e *traces.Event) {
	full := len(c.s.Global) > 0
	if full && !c.globalFull {
		c.globalSince = e.Seq
	} else if !full && c.globalFull {
		c.globalEpoch++
	}
	c.globalFull = full
}

// check checks event idx, e (the frame numbered it) and, once it
// conforms, keeps what the next events need and checks the invariants.
// Under the search over readings of batch steals (sr), searchCheck calls
// it again, to search the readings before it if it fails there.
func (c *Conformance) check(idx int, e *traces.Event) error {
	if c.sr != nil && !c.sr.inCheck {
		return c.searchCheck(idx, e)
	}
	if idx > 0 && e.Seq <= c.fr.LastSeq {
		return c.fail(idx, e, 0, "Seq increases", frame.SeqReason(e.Seq, c.fr.LastSeq))
	}
	if int(e.Worker) >= len(c.workers) || e.Worker < -1 {
		return c.fail(idx, e, frame.Rule(e), "0 ≤ w < W", fmt.Sprintf("no worker %d: the header declares %d workers", e.Worker, len(c.workers)))
	}
	if err := traces.Validate(c.h, *e); err != nil {
		return c.fail(idx, e, frame.Rule(e), PremiseWellFormed, err.Error())
	}
	if e.Task > MaxTask {
		return c.fr.TaskLimit(idx, e, frame.Rule(e))
	}
	t := int(e.Task)
	if e.Kind != traces.KindSpawn && t != 0 && (t > len(c.s.Task) || c.s.Task[t-1] == model.Idle) {
		if !(e.Kind == traces.KindStep && e.Rule == model.SPAWN) {
			return c.fail(idx, e, frame.Rule(e), "task spawned", fmt.Sprintf("task %d was never spawned", t))
		}
	}
	// Settle the decisions this event depends on: a deferred end of a poll
	// by this worker, or of this task's poll.
	if w := int(e.Worker); w >= 0 && c.workers[w].pend != confNone {
		if err := c.settle(idx, e, w); err != nil {
			return err
		}
	}
	if c.npend > 0 && t != 0 && t <= len(c.tasks) {
		if w := c.s.WorkerOf(t); w >= 0 && c.workers[w].pend != confNone && int(c.workers[w].pendTask) == t {
			if err := c.settle(idx, e, w); err != nil {
				return err
			}
		}
	}
	if c.iv != nil {
		c.iv.Push(e)
	}
	var err error
	done := false // the event was a v1.1 one, checked by stepV11
	if c.v11 != nil {
		if done, err = c.stepV11(idx, e); err != nil {
			return err
		}
	}
	if !done {
		switch e.Kind {
		case traces.KindSpawn:
			err = c.spawn(idx, e)
		case traces.KindTake:
			err = c.take(idx, e)
		case traces.KindPollBegin:
			err = c.pollBegin(idx, e)
		case traces.KindPollEnd:
			err = c.pollEnd(idx, e)
		case traces.KindWake:
			err = c.wake(idx, e)
		case traces.KindRequeue:
			err = c.requeue(idx, e)
		case traces.KindPark:
			c.park(idx, e)
		case traces.KindUnpark:
			c.workers[e.Worker].parked = false
		case traces.KindPanic:
			c.fr.Panicked(idx, e)
		case traces.KindStep:
			err = c.modelStep(idx, e)
		case traces.KindRegister:
			err = c.register(idx, e)
		}
	}
	if err != nil {
		return err
	}
	// The event conforms.
	if e.Worker >= 0 {
		c.workers[e.Worker].lastSeq = e.Seq
	}
	if c.v11 != nil {
		c.afterV11(e)
	}
	c.afterEvent(e)
	return c.checkInvariants(idx, e)
}

// fail records the violation at event idx, with the model state.
func (c *Conformance) fail(idx int, e *traces.Event, r model.Rule, premise, reason string) error {
	return c.fr.FailAt(idx, e, r, "premise ", premise, reason, c.Lanes())
}

// failLost records a violation of TASK-SUSPEND found at a later event e (a
// wake or a take that only a lost re-queue explains): the rule is
// TASK-SUSPEND, the event is described as what it reports.
func (c *Conformance) failLost(idx int, e *traces.Event, reason string) error {
	err := c.fail(idx, e, model.TASK_SUSPEND, LostSuspendPremise, reason)
	c.fr.Err.Msg = fmt.Sprintf("event %d (seq %d): %s, but %s (premise %s fails)", idx+1, e.Seq, frame.Describe(e, frame.Rule(e)), reason, LostSuspendPremise)
	return err
}

// failStep records a violation from the model's *PremiseError (or any error).
func (c *Conformance) failStep(idx int, e *traces.Event, r model.Rule, err error) error {
	if pe, ok := err.(*model.PremiseError); ok {
		switch pe.Step.Rule {
		case model.GLOBAL_STEAL, model.POLL_LOCAL, model.WORKER_STEAL:
			// A take out of the model's order while a NOTIFIED task's
			// re-queue is still unrecorded: the model queued that task at
			// TASK-SUSPEND, the executor did not. The defect is the lost
			// wake of TASK-SUSPEND, not the take.
			for u := range c.tasks {
				if c.tasks[u].flags&confRequeue != 0 {
					return c.failLost(idx, e,
						fmt.Sprintf("%s; t%d's poll returned Pending while it was NOTIFIED and no re-queue of it was recorded: the executor did not queue it again, so the wake during its poll was lost", pe.Reason, u+1))
				}
			}
		}
		return c.fail(idx, e, pe.Step.Rule, pe.Premise, pe.Reason)
	}
	return c.fail(idx, e, r, "a rule of the model", err.Error())
}

// growTasks makes room for task t in the checker's own tables.
func (c *Conformance) growTasks(t int) {
	for len(c.tasks) < t {
		c.tasks = append(c.tasks, confTask{})
	}
}

// apply applies one rule instance, and notes when its task becomes QUEUED
// (for the fairness figures).
func (c *Conformance) apply(st model.Step, seq uint64) error {
	i := st.Task - 1
	var before model.TaskState
	if i >= 0 && i < len(c.s.Task) {
		before = c.s.Task[i]
	}
	if c.gq != nil && st.Rule == model.WORKER_STEAL {
		c.globalInOrder() // its premise "global = ∅" lists the queue
	}
	if err := c.m.Apply(c.s, st); err != nil {
		return err
	}
	c.syncGlobal(st)
	if c.s.Task[i] == model.Queued && before != model.Queued {
		c.growTasks(st.Task)
		ct := &c.tasks[i]
		l := c.liveOf(ct)
		l.readyPolls = c.polls
		l.readySeq = seq
		ct.flags |= confReady
	}
	return nil
}

// dest maps an event's queue onto a Step's destination: e.Queue, or for an
// event that does not say, the acting worker's local queue (the global
// queue from outside the workers, or under a policy without local queues).
func (c *Conformance) dest(e *traces.Event) int {
	switch {
	case e.Queue == traces.QueueGlobal:
		return model.Global
	case e.Queue != traces.QueueNone:
		return e.Queue.Worker()
	case e.Worker >= 0 && c.cap > 0:
		return int(e.Worker)
	}
	return model.Global
}

// placed returns where the model just pushed task t: the tail of worker w's
// local queue, or the global queue.
func (c *Conformance) placed(t, w int) traces.Queue {
	if w >= 0 && w < len(c.s.Local) {
		if q := c.s.Local[w]; len(q) > 0 && int(q[len(q)-1]) == t {
			return traces.LocalQueue(w)
		}
	}
	return traces.QueueGlobal
}

// checkPush checks that the queue an event pushed its task onto is the
// acting worker's own local queue or the global queue (checkPlaced then
// checks that the model, with its capacity, put it there too).
func (c *Conformance) checkPush(idx int, e *traces.Event, r model.Rule) error {
	if w := e.Queue.Worker(); w >= 0 && w != int(e.Worker) {
		return c.fail(idx, e, r, "pushed on the acting worker's own local queue, or the global queue", fmt.Sprintf("%s pushes onto worker %d's local queue", frame.Who(int(e.Worker)), w))
	}
	return nil
}

func (c *Conformance) checkPlaced(idx int, e *traces.Event, r model.Rule, w int) error {
	t := int(e.Task)
	got := c.placed(t, w)
	if got == e.Queue || e.Queue == traces.QueueNone {
		return nil
	}
	if c.cap == 0 {
		return c.fail(idx, e, r, "the policy has one global queue", fmt.Sprintf("the model put t%d on the global queue", t))
	}
	if got == traces.QueueGlobal && e.Queue.Worker() >= 0 {
		return c.fail(idx, e, r, "a push onto a full local queue overflows to the global queue", fmt.Sprintf("w%d's local queue is full (capacity %d), so the model put t%d on the global queue", w, c.capacity(), t))
	}
	return c.fail(idx, e, r, "the task goes where the rule pushes it", fmt.Sprintf("the model put t%d on %s", t, got))
}

func (c *Conformance) capacity() int {
	if c.slotOn {
		return c.cap - 1
	}
	return c.cap
}

func (c *Conformance) spawn(idx int, e *traces.Event) error {
	if err := c.checkPush(idx, e, model.SPAWN); err != nil {
		return err
	}
	d := c.dest(e)
	t := int(e.Task)
	st := model.Step{Rule: model.SPAWN, Worker: int(e.Worker), Task: t, Victim: -1, Dest: d}
	if err := c.apply(st, e.Seq); err != nil {
		return c.failStep(idx, e, model.SPAWN, err)
	}
	c.growTasks(t)
	if err := c.checkPlaced(idx, e, model.SPAWN, d); err != nil {
		return err
	}
	c.slotPush(e, d)
	return nil
}

func (c *Conformance) take(idx int, e *traces.Event) error {
	w, t := int(e.Worker), int(e.Task)
	r := frame.TakeRule(e.Source)
	if c.iv != nil {
		if err := c.iv.Take(idx, e); err != nil {
			return err
		}
	}
	st := model.Step{Rule: r, Worker: w, Task: t, Victim: -1, Dest: -1}
	if r == model.WORKER_STEAL {
		st.Victim = int(e.Victim)
	}
	if c.iv != nil {
		if err := c.iv.ClaimBefore(e, r, w, st.Victim); err != nil {
			return err
		}
	}
	// The local queue the take may remove from (steal-last counts them).
	from := -1
	if r == model.WORKER_STEAL {
		from = st.Victim
	} else if r == model.POLL_LOCAL {
		from = w
	}
	before := 0
	if from >= 0 && from < len(c.s.Local) {
		before = len(c.s.Local[from])
	}
	defer func() {
		if c.iv != nil && c.fr.Err == nil && from >= 0 && from < len(c.s.Local) {
			c.iv.Removed(from, e, before-len(c.s.Local[from])+c.iv.In())
		}
	}()
	var err error
	reading := 0
	if c.sr == nil {
		err = c.takeOrders(idx, e, st, 0)
	} else {
		reading = c.sr.dev[idx] // 0 but where the search over batch steals says
		err = c.takeRead(idx, e, st, reading)
		// The batch readings past the orders (Reader.Reading), in turn.
		for last, err0 := c.iv.LastReading(st), err; err != nil && reading < last; {
			reading = max(reading+1, interval.TryCut)
			if err = c.takeRead(idx, e, st, reading); err != nil {
				err = err0
			}
		}
	}
	if err != nil {
		return c.failStep(idx, e, r, err)
	}
	if c.sr != nil {
		c.sr.note(idx, e, max(c.iv.Pos(), reading), c.iv.LastReading(st))
	}
	if cfg := c.m.Config(); c.iv != nil && cfg.StealHalf && !cfg.StealLast && cfg.OwnerFIFO {
		c.iv.BatchAfter(r, w, st.Victim, int32(t), e.Call, e.Return)
		if err := c.iv.ClaimAfterFIFO(w); err != nil {
			return err
		}
	}
	if cfg := c.m.Config(); c.iv != nil && r == model.WORKER_STEAL && cfg.StealHalf && cfg.StealLast {
		if err := c.iv.ClaimAfter(w); err != nil {
			return err
		}
		c.iv.BatchMoved(w, e)
	}
	c.growTasks(t)
	ct := &c.tasks[t-1]
	if ct.flags&confReady != 0 {
		c.fairness(t, ct, e.Seq)
	}
	c.clearFlags(ct, confReady|confWoken|confRequeue)
	c.polls++
	return nil
}

// takeRead applies take st (event idx, e) as its reading p says
// (Reader.Reading: 0, the checker's own, tries every order in turn), under
// the search over batch steals.
func (c *Conformance) takeRead(idx int, e *traces.Event, st model.Step, p int) error {
	first := c.iv.Reading(st, p)
	if first < 0 {
		return errSkipped
	}
	front := c.iv.CutOwed(st, e)
	err := c.takeOrders(idx, e, st, first)
	if len(front) > 0 {
		c.iv.Uncut(st.Victim, front)
	}
	return err
}

// takeOrders applies take st (event idx, e): at its Seq, or as of an
// instant of [Call, Seq] (the relaxed premises), or, under order
// "intervals", in an order of the overlapping operations (Reader.Relax), the
// orders from first on.
func (c *Conformance) takeOrders(idx int, e *traces.Event, st model.Step, first int) error {
	err := errSkipped
	if first == 0 {
		err = c.takeStep(st, e)
	}
	w := st.Worker
	if first == 0 && err != nil && (st.Rule == model.WORKER_STEAL || st.Rule == model.POLL_LOCAL) && len(c.s.Global) > 0 && e.Call != 0 && c.globalSince > min(e.Call, c.workers[w].lastSeq) {
		// The relaxed premises: the global queue was empty at an instant
		// of [Call, Seq]; check the take as of that instant.
		g := c.s.Global
		c.s.Global = nil
		err = c.takeStep(st, e)
		c.s.Global = g
		if err == nil {
			c.relaxed++
		}
	}
	if err != nil && c.iv != nil {
		err = c.iv.Relax(idx, e, st, err, first)
	}
	return err
}

func (c *Conformance) takeStep(st model.Step, e *traces.Event) error {
	switch {
	case c.priority && st.Rule == model.GLOBAL_STEAL:
		if c.v11 != nil && c.v11.prioOn {
			return c.takePriority(st, e.Seq)
		}
		return c.takeAnywhere(st, e.Seq)
	case c.slotOn:
		return c.takeWithSlot(st, e)
	}
	return c.apply(st, e.Seq)
}

// fairness records the wait of task t, taken now.
func (c *Conformance) fairness(t int, task *confTask, seq uint64) {
	ct := c.slot(task)
	if other := c.polls - ct.readyPolls; other > c.maxOther || c.maxOTask == 0 {
		c.maxOther, c.maxOTask = other, int64(t)
	}
	if seq >= ct.readySeq {
		if d := seq - ct.readySeq; d > c.maxDelay || c.maxDTask == 0 {
			c.maxDelay, c.maxDTask = d, int64(t)
		}
	}
}

// takeAnywhere is GLOBAL-STEAL under the priority policy, whose order a
// trace cannot show: the task is moved to the head of the global queue if
// it is in it (O(1), package globalq), and the rule applied.
func (c *Conformance) takeAnywhere(st model.Step, seq uint64) error {
	if !c.gq.Has(int32(st.Task)) {
		return c.apply(st, seq) // the model says why
	}
	undo := c.gq.ToFront(&c.s.Global, int32(st.Task))
	err := c.apply(st, seq)
	if err != nil {
		undo()
	}
	return err
}

func (c *Conformance) pollBegin(idx int, e *traces.Event) error {
	w, t := int(e.Worker), int(e.Task)
	if cur := int(c.s.Cur[w]); cur != t {
		if c.v11 != nil {
			if handled, err := c.spuriousRepoll(idx, e); handled {
				return err
			}
		}
		switch {
		case c.s.Task[t-1] == model.Done:
			return c.fail(idx, e, model.TASK_COMPLETE, "a DONE task is never polled again", fmt.Sprintf("t%d is DONE", t))
		case cur == 0:
			if ow := c.s.WorkerOf(t); ow >= 0 {
				return c.fail(idx, e, 0, "RUNNING(w): w took the task it polls", fmt.Sprintf("w%d is idle and t%d is RUNNING on w%d: two workers poll it", w, t, ow))
			}
			return c.fail(idx, e, 0, "RUNNING(w): w took the task it polls", fmt.Sprintf("w%d is idle and t%d is %s", w, t, c.s.Task[t-1]))
		default:
			return c.fail(idx, e, 0, "RUNNING(w): w took the task it polls", fmt.Sprintf("w%d is polling t%d", w, cur))
		}
	}
	return nil
}

func (c *Conformance) pollEnd(idx int, e *traces.Event) error {
	w, t := int(e.Worker), int(e.Task)
	switch e.Result {
	case traces.ResultPending:
		if c.s.Cur[w] == int32(t) && !c.s.Polled[t-1] {
			if err := c.apply(model.Step{Rule: model.POLL_PENDING, Worker: w, Task: t, Victim: -1, Dest: -1}, e.Seq); err != nil {
				return c.failStep(idx, e, model.POLL_PENDING, err)
			}
		}
		if c.slices && c.s.Cur[w] == int32(t) && c.s.Task[t-1] == model.Notified {
			c.workers[w].pend, c.workers[w].pendTask = confSuspend, int32(t)
			c.npend++
			return nil
		}
		return c.suspend(idx, e, w, t, false)
	case traces.ResultReady:
		if err := c.apply(model.Step{Rule: model.TASK_COMPLETE, Worker: w, Task: t, Victim: -1, Dest: -1}, e.Seq); err != nil {
			return c.failStep(idx, e, model.TASK_COMPLETE, err)
		}
	case traces.ResultPanic, traces.ResultError:
		if c.retry && c.s.Cur[w] == int32(t) {
			c.workers[w].pend, c.workers[w].pendTask = confFailed, int32(t)
			c.npend++
			return nil
		}
		if err := c.apply(model.Step{Rule: model.TASK_COMPLETE, Worker: w, Task: t, Victim: -1, Dest: -1, Failed: true}, e.Seq); err != nil {
			return c.failStep(idx, e, model.TASK_COMPLETE, err)
		}
	}
	return nil
}

// suspend applies TASK-SUSPEND; e is the event that settled it.
func (c *Conformance) suspend(idx int, e *traces.Event, w, t int, repoll bool) error {
	if err := c.suspendStep(w, t, repoll, e.Seq); err != nil {
		return c.failStep(idx, e, model.TASK_SUSPEND, err)
	}
	return nil
}

// suspendStep applies TASK-SUSPEND of t by w and keeps the checker's tables.
func (c *Conformance) suspendStep(w, t int, repoll bool, seq uint64) error {
	wasNotified := c.s.Task[t-1] == model.Notified
	st := model.Step{Rule: model.TASK_SUSPEND, Worker: w, Task: t, Victim: -1, Dest: -1, Repoll: repoll}
	if err := c.apply(st, seq); err != nil {
		return err
	}
	ct := &c.tasks[t-1]
	if repoll {
		if ct.flags&confReady != 0 {
			c.fairness(t, ct, seq)
		}
		c.clearFlags(ct, confReady|confWoken)
		c.polls++
		return nil
	}
	if wasNotified {
		ct.flags |= confRequeue
		c.liveOf(ct).requeue = c.placed(t, w)
		c.slotRequeue(w, t)
	}
	return nil
}

// settle decides the deferred end of worker w's poll, now that event e of
// that worker or task came.
func (c *Conformance) settle(idx int, e *traces.Event, w int) error {
	cw := &c.workers[w]
	t := int(cw.pendTask)
	kind := cw.pend
	cw.pend, cw.pendTask = confNone, 0
	c.npend--
	switch kind {
	case confSuspend:
		repoll := e.Kind == traces.KindPollBegin && int(e.Worker) == w && int(e.Task) == t
		if c.v11 != nil {
			if err := c.sliceDecision(idx, e, w, t, repoll); err != nil {
				return err
			}
		}
		return c.suspend(idx, e, w, t, repoll)
	case confFailed:
		retried := e.Kind == traces.KindRequeue && int(e.Task) == t
		if n := c.m.Config().Retries; retried && int(c.s.Tries[t-1]) >= n {
			return c.fail(idx, e, model.TASK_COMPLETE, fmt.Sprintf("a failed task is run again at most %d times (retries)", n), fmt.Sprintf("t%d failed %d times and is re-queued once more", t, c.s.Tries[t-1]+1))
		}
		st := model.Step{Rule: model.TASK_COMPLETE, Worker: w, Task: t, Victim: -1, Dest: -1, Failed: retried}
		if err := c.apply(st, e.Seq); err != nil {
			return c.failStep(idx, e, model.TASK_COMPLETE, err)
		}
		if retried && c.s.Task[t-1] == model.Queued {
			ct := &c.tasks[t-1]
			ct.flags |= confRequeue
			c.liveOf(ct).requeue = traces.QueueGlobal
		}
	}
	return nil
}

// settleAll settles every deferred decision at the end of the trace. The
// trace ended before the worker's next event, so either ending of the poll
// is consistent with it: the one the model enables is taken.
func (c *Conformance) settleAll() {
	for w := range c.workers {
		cw := &c.workers[w]
		t := int(cw.pendTask)
		switch cw.pend {
		case confSuspend:
			if c.suspendStep(w, t, false, c.fr.LastSeq) != nil {
				c.suspendStep(w, t, true, c.fr.LastSeq)
			}
		case confFailed:
			c.apply(model.Step{Rule: model.TASK_COMPLETE, Worker: w, Task: t, Victim: -1, Dest: -1}, c.fr.LastSeq)
		}
		cw.pend, cw.pendTask = confNone, 0
	}
	c.npend = 0
}

func (c *Conformance) wake(idx int, e *traces.Event) error {
	t := int(e.Task)
	state := c.s.Task[t-1]
	want := model.WakeOutcome(c.s, t)
	if got := e.Outcome.String(); got != want && e.Outcome != traces.OutcomeNone {
		if c.tasks[t-1].flags&confRequeue != 0 && e.Outcome == traces.OutcomeScheduled {
			// The task's poll returned Pending while it was NOTIFIED and no
			// re-queue was recorded since: the executor left it WAITING,
			// and this later wake finds it so. The defect is the lost
			// wake of TASK-SUSPEND, not a second enqueue.
			return c.failLost(idx, e,
				fmt.Sprintf("t%d's poll returned Pending while it was NOTIFIED and no re-queue was recorded; this later wake schedules it again, so the executor had left it WAITING: the wake during its poll was lost", t))
		}
		return c.fail(idx, e, model.WAKE, wakePremise(state), wakeReason(e.Outcome, state, t))
	}
	if err := c.checkPush(idx, e, model.WAKE); err != nil {
		return err
	}
	d := c.dest(e)
	if err := c.apply(model.Step{Rule: model.WAKE, Worker: int(e.Worker), Task: t, Victim: -1, Dest: d}, e.Seq); err != nil {
		return c.failStep(idx, e, model.WAKE, err)
	}
	if state == model.Waiting {
		if err := c.checkPlaced(idx, e, model.WAKE, d); err != nil {
			return err
		}
		c.slotPush(e, d)
	}
	if state == model.Waiting || state == model.Running {
		c.tasks[t-1].flags |= confWoken
	}
	return nil
}

// wakePremise states what WAKE does to a task in state s.
func wakePremise(s model.TaskState) string {
	switch s {
	case model.Waiting:
		return "WAKE of a WAITING task schedules it (WAITING → QUEUED)"
	case model.Running:
		return "WAKE of a RUNNING task notifies it (RUNNING → NOTIFIED)"
	case model.Queued, model.Notified:
		return "WAKE of a QUEUED or NOTIFIED task coalesces (idempotent)"
	case model.Done:
		return "WAKE of a DONE task is late (ignored)"
	}
	return "WAKE of a spawned task"
}

func wakeReason(got traces.Outcome, s model.TaskState, t int) string {
	switch {
	case s == model.Waiting && got != traces.OutcomeScheduled:
		return fmt.Sprintf("t%d was WAITING: the wake is lost", t)
	case s == model.Running && got == traces.OutcomeScheduled:
		return fmt.Sprintf("t%d was RUNNING: it is queued while its poll still runs", t)
	case s == model.Running:
		return fmt.Sprintf("t%d was RUNNING: the wake during the poll is lost (NOTIFIED missing)", t)
	case (s == model.Queued || s == model.Notified) && got == traces.OutcomeScheduled:
		return fmt.Sprintf("t%d was already %s: it is enqueued twice", t, s)
	}
	return fmt.Sprintf("t%d was %s", t, s)
}

func (c *Conformance) requeue(idx int, e *traces.Event) error {
	t := int(e.Task)
	ct := &c.tasks[t-1]
	if ct.flags&confRequeue == 0 {
		if c.v11 != nil && c.v11.spurious && c.s.Task[t-1] == model.Waiting {
			return c.busyRequeue(idx, e)
		}
		return c.fail(idx, e, model.TASK_SUSPEND, "a re-queue follows TASK-SUSPEND of a NOTIFIED task, or a retried failure", c.requeueReason(t))
	}
	want := c.slot(ct).requeue
	c.clearFlags(ct, confRequeue)
	if e.Queue != want {
		r := model.TASK_SUSPEND
		if c.retry && want == traces.QueueGlobal {
			r = model.TASK_COMPLETE
		}
		if w := e.Queue.Worker(); w >= 0 && want == traces.QueueGlobal && c.cap > 0 {
			return c.fail(idx, e, r, "a push onto a full local queue overflows to the global queue", fmt.Sprintf("w%d's local queue is full (capacity %d), so the model re-queued t%d on the global queue", w, c.capacity(), t))
		}
		return c.fail(idx, e, r, "the task goes where the rule pushes it", fmt.Sprintf("the model re-queued t%d on %s", t, want))
	}
	return nil
}

func (c *Conformance) park(idx int, e *traces.Event) {
	w := int(e.Worker)
	cw := &c.workers[w]
	cw.parked = true
	cw.parkIdx, cw.parkSeq = idx, e.Seq
	cw.parkG = len(c.s.Global) > 0
	cw.parkL = len(c.s.Local[w]) > 0
	cw.parkEp = c.globalEpoch
	if t := c.s.Cur[w]; t != 0 {
		c.fr.ParkPolling(idx, e, w, int64(t))
	}
}

// modelStep applies a step event: a rule named by the event, as in a
// model checker's counterexample.
func (c *Conformance) modelStep(idx int, e *traces.Event) error {
	if e.Rule == model.WORKER_STEAL && e.Queue != traces.QueueNone {
		return nil // a look at a queue, not a take
	}
	st := model.Step{Rule: e.Rule, Worker: int(e.Worker), Task: int(e.Task), Victim: -1, Dest: -1}
	switch e.Rule {
	case model.SPAWN, model.WAKE:
		st.Dest = c.dest(e)
	case model.WORKER_STEAL:
		st.Victim = int(e.Victim)
	}
	if err := c.apply(st, e.Seq); err != nil {
		return c.failStep(idx, e, e.Rule, err)
	}
	c.growTasks(st.Task)
	return nil
}

// checkInvariants checks the model's invariants after event idx: after every
// event while the state is small, else every invEvery events so that the
// cost stays a constant per event.
func (c *Conformance) checkInvariants(idx int, e *traces.Event) error {
	c.invCount++
	if c.invCount < c.invEvery {
		return nil
	}
	c.invCount = 0
	if inv, err := c.m.CheckInvariants(c.s); err != nil {
		return c.failInvariant(idx, e, inv, err)
	}
	c.invEvery = 1
	if size := len(c.s.Task) + len(c.s.Global) + len(c.workers)*len(c.workers); size > 64 {
		c.invEvery = size
	}
	return nil
}

func (c *Conformance) failInvariant(idx int, e *traces.Event, inv *model.Invariant, err error) error {
	reason := err.Error()
	if c.invEvery > 1 {
		reason += fmt.Sprintf(" (invariants are checked every %d events on a state this size: the step that broke it is one of the last %d)", c.invEvery, c.invEvery)
	}
	return c.fail(idx, e, inv.Rule, "invariant "+inv.Name, reason)
}

// Finish ends the trace and reports: the violation if any, lost wakeups,
// tasks never completed, the fairness figures and the findings. Calling it
// again returns the same report; Step after Finish is an error.
func (c *Conformance) Finish() *Report {
	if c.report != nil {
		return c.report
	}
	failed := c.fr.Err != nil // a Step's violation: searched then
	c.finishChecks()
	if c.sr != nil && !failed {
		c.searchFinish()
	}
	r := &Report{
		Events:            c.fr.N,
		Err:               c.fr.Err,
		MaxOtherPolls:     int(c.maxOther),
		MaxOtherPollsTask: c.maxOTask,
		MaxDelay:          c.maxDelay,
		MaxDelayTask:      c.maxDTask,
		Relaxed:           c.relaxed,
		Reordered:         c.reordered(),
		Panics:            c.fr.Panics,
		PanicCount:        c.fr.NPanics,
	}
	c.searchReport(r)
	for i := range c.tasks {
		// Tasks still QUEUED at the end: their wait so far.
		if ct := &c.tasks[i]; ct.flags&confReady != 0 {
			if other := c.polls - c.slot(ct).readyPolls; other > c.maxOther {
				c.maxOther, c.maxOTask = other, int64(i+1)
				r.MaxOtherPolls, r.MaxOtherPollsTask, r.StillWaiting = int(other), int64(i+1), true
			}
		}
	}
	for i, st := range c.s.Task {
		if st == model.Idle {
			continue
		}
		r.Tasks++
		if st == model.Done {
			r.Completed++
			continue
		}
		r.NeverCompleted = append(r.NeverCompleted, int64(i+1))
		if i < len(c.tasks) && c.tasks[i].flags&confWoken != 0 {
			r.LostWakeups = append(r.LostWakeups, int64(i+1))
		}
	}
	r.Warnings = append(r.Warnings, c.fr.Warnings...)
	for w := range c.workers {
		cw := &c.workers[w]
		if !cw.parked {
			continue
		}
		var left []string
		if cw.parkL && len(c.s.Local[w]) > 0 {
			left = append(left, fmt.Sprintf("its local queue held %s", tasksOf(c.s.Local[w])))
		}
		if cw.parkG && cw.parkEp == c.globalEpoch && len(c.s.Global) > 0 {
			left = append(left, fmt.Sprintf("the global queue held %s", tasksOf(c.s.Global)))
		}
		if len(left) > 0 {
			r.Warnings = append(r.Warnings, Finding{Index: cw.parkIdx, Seq: cw.parkSeq, Worker: w,
				Msg: fmt.Sprintf("worker %d parked while %s, which stayed non-empty, and never unparked (a lost wake between its check and its park?)", w, strings.Join(left, " and "))})
		}
	}
	sort.SliceStable(r.Warnings, func(i, j int) bool { return r.Warnings[i].Index < r.Warnings[j].Index })
	c.finishV11(r)
	r.Verdict = c.fr.Verdict(len(r.NeverCompleted))
	c.report, c.fr.Closed = r, errConfAfterFinish
	return r
}

func tasksOf(q []int32) string {
	ts := make([]int64, len(q))
	for i, t := range q {
		ts[i] = int64(t)
	}
	return "[" + frame.TaskList(ts) + "]"
}

// finishChecks checks what only the end of the trace decides.
func (c *Conformance) finishChecks() {
	c.globalInOrder()
	if c.fr.Err == nil {
		c.settleAll()
	}
	if c.fr.Err == nil && c.iv != nil {
		c.iv.Finish()
	}
	if c.fr.Err == nil {
		if inv, err := c.m.CheckInvariants(c.s); err != nil {
			e := traces.Event{Seq: c.fr.LastSeq, Worker: -1, Victim: -1}
			c.invEvery = 1
			c.failInvariant(c.fr.N, &e, inv, err)
		}
	}
}

// Check checks a whole trace: the events, in Seq order, as a Reader's
// All yields them. A read error stops the check: Check returns the
// report on the events before it and the error. A violation is not an
// error: it is in the report.
func Check(h traces.Header, events iter.Seq2[traces.Event, error]) (*Report, error) {
	c, err := New(h)
	return frame.CheckAll(c, err, events)
}
