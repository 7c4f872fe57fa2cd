package properties

import (
	"container/heap"
	"errors"
	"fmt"
	"strings"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/properties/internal/text"
)

// Names of the properties, as they appear in test names, reports and the
// -only/-skip filters.
const (
	checkExactlyOnce    = "exactly-once"
	checkConcurrentPoll = "no-concurrent-poll"
	checkPollAfterReady = "no-poll-after-ready"
	checkDuringPoll     = "waker-during-poll"
	checkAnyGoroutine   = "waker-any-goroutine"
	checkClone          = "waker-clone"
	checkLostWakeup     = "no-lost-wakeup"
	checkIdempotence    = "waker-idempotence"
	checkLiveness       = "liveness"
	checkCloseWaits     = "close-waits"
	checkFairness       = "fairness"
	checkConformance    = "conformance"
	checkLinearizable   = "linearizability"
	checkWorkConserve   = "work-conservation"
)

// Property is one declared check of the suite: the workloads it draws, the
// rule or contract it protects, and the check it makes on every case.
//
// Every case of every property runs every selected check (but the costly
// ones, which run on their own cases), in list order, so a case drawn for
// one property can fail another; the workloads a property draws are the
// ones most likely to break it. A Property is immutable once
// declared and safe for concurrent use.
type Property struct {
	Name string // short, stable, kebab-case
	Doc  string // one line: what must hold
	// Rule is the rule of the model the property protects, or 0 when it
	// protects a contract of the API stated in Contract.
	Rule     model.Rule
	Contract string
	// Fails is the stable failure message. Rapid shrinks a counterexample
	// only while it fails with the same message, so the volatile detail
	// (task numbers, sequence numbers) goes to the log, not here.
	Fails string
	// Shape is the workloads the property's cases draw.
	Shape Shape
	// Applies reports whether the property can be checked on ex; nil means
	// always. A property that does not apply is reported as skipped.
	Applies func(ex executor.Executor) bool
	// Check returns nil when the observation satisfies the property, or an
	// error carrying the volatile detail of the failure.
	Check func(o *Observation) error
	// Costly properties are checked only on their own cases, not on every
	// case of the suite: their Check costs far more than a case.
	Costly bool
	// ConsequenceOf names the checks whose defects can also show as a
	// failure of this one (a lost wake starves an endless task): once one
	// of them is reported, a case that fails this check first is taken
	// for the same defect, not reported again.
	ConsequenceOf []string
}

// Protects names what p protects: the rule as DESIGN.md spells it, or the
// contract.
func (p *Property) Protects() string {
	if p.Rule != 0 {
		return p.Rule.String()
	}
	return p.Contract
}

// String is "name (PROTECTS)".
func (p *Property) String() string { return p.Name + " (" + p.Protects() + ")" }

// Properties returns the suite's properties in the order they run. The
// slice is fresh; the properties are shared.
func Properties() []*Property { return append([]*Property(nil), suite...) }

// Lookup returns the property with the given name.
func Lookup(name string) (*Property, error) {
	for _, p := range suite {
		if p.Name == name {
			return p, nil
		}
	}
	names := make([]string, len(suite))
	for i, p := range suite {
		names[i] = p.Name
	}
	return nil, fmt.Errorf("unknown property %q (want one of %s)", name, strings.Join(names, ", "))
}

var suite = []*Property{
	{
		Name:          checkExactlyOnce,
		Doc:           "every spawned task completes exactly once, Wait returns only then, and Join returns its result",
		Rule:          model.TASK_COMPLETE,
		Fails:         "a spawned task did not complete exactly once",
		Shape:         Shape{Repeat: true, Spawn: true, Panics: true, Priorities: true, Clone: 1},
		Check:         checkOnce,
		ConsequenceOf: []string{checkPollAfterReady, checkConcurrentPoll, checkLostWakeup, checkLiveness},
	},
	{
		Name:  checkConcurrentPoll,
		Doc:   "no task is polled by two goroutines at once",
		Rule:  model.POLL_LOCAL,
		Fails: "a task was polled while another poll of it was running",
		Shape: Shape{MaxTasks: 8, Repeat: true, Spawn: true, Clone: 1},
		Check: violations(checkConcurrentPoll),
	},
	{
		Name:  checkPollAfterReady,
		Doc:   "a task that returned Ready or panicked is never polled again",
		Rule:  model.TASK_COMPLETE,
		Fails: "a task was polled after it finished",
		Shape: Shape{Repeat: true, Spawn: true, Panics: true, Clone: 1},
		Check: checkRepoll,
	},
	{
		Name:          checkFairness,
		Doc:           "a task woken after every poll is polled again and again (□◇ready ⇒ □◇polled): within the executor's stated bound, or by default within 1,000 polls of other tasks by every worker and 1 s; not checked for an executor that states it promises no fairness (executor.FairnessPromiser)",
		Contract:      "fairness",
		Fails:         "a ready task was starved",
		Shape:         Shape{Endless: true, Priorities: true, EndlessPolls: 24},
		Check:         violations(checkFairness),
		ConsequenceOf: []string{checkLostWakeup, checkLiveness},
	},
	{
		Name:     checkCloseWaits,
		Doc:      "Close waits for every spawned task, queued or waiting, before it returns",
		Contract: "Executor.Close",
		Fails:    "Close returned before every spawned task completed",
		Shape:    Shape{Shutdown: true, Spawn: true, Clone: 1},
		Check:    checkClose,
	},
	{
		Name:          checkDuringPoll,
		Doc:           "a wake that arrives while the task is being polled leads to another poll (NOTIFIED)",
		Rule:          model.TASK_SUSPEND,
		Fails:         "a wake during a poll was lost",
		Shape:         Shape{Modes: []WakeMode{WakeSelf}, Clone: 1},
		Check:         lost(func(w wakeRec) bool { return w.kind == wakeDuring && !w.clone }),
		ConsequenceOf: []string{checkLostWakeup, checkLiveness},
	},
	{
		Name:          checkAnyGoroutine,
		Doc:           "a wake from another goroutine, before, during or after a poll, leads to a poll",
		Rule:          model.WAKE,
		Fails:         "a wake from another goroutine was lost",
		Shape:         Shape{Modes: []WakeMode{WakeAsync, WakeAfter}, Clone: 1},
		Check:         lost(func(w wakeRec) bool { return w.kind == wakeOutside && !w.clone }),
		ConsequenceOf: []string{checkLostWakeup, checkLiveness},
	},
	{
		Name:          checkClone,
		Doc:           "a clone of a waker wakes the same task as the waker",
		Contract:      "waker contract: clone equivalence",
		Fails:         "a wake through a cloned waker was lost",
		Shape:         Shape{Clone: 2},
		Check:         lost(func(w wakeRec) bool { return w.clone }),
		ConsequenceOf: []string{checkLostWakeup, checkLiveness},
	},
	{
		Name:          checkLostWakeup,
		Doc:           "a woken task that is not done is polled again",
		Rule:          model.WAKE,
		Fails:         "a woken task was never polled again",
		Shape:         Shape{Repeat: true, Spawn: true},
		Check:         lost(func(wakeRec) bool { return true }),
		ConsequenceOf: []string{checkLiveness},
	},
	{
		Name:          checkIdempotence,
		Doc:           "many wakes before a poll lead to one poll: every poll after the first is owed to a wake of its own",
		Contract:      "waker contract: idempotence",
		Fails:         "a task was polled again without a wake since its previous poll",
		Shape:         Shape{Repeat: true, MaxTasks: 8},
		Check:         checkIdempotent,
		ConsequenceOf: []string{checkPollAfterReady, checkConcurrentPoll},
	},
	{
		Name:     checkLiveness,
		Doc:      "the executor does not hang: Wait returns once every task is done",
		Contract: "Executor.Wait",
		Fails:    "the executor hung",
		Shape:    Shape{Repeat: true, Spawn: true, Panics: true},
		Check:    checkLive,
	},
	{
		Name:     checkConformance,
		Doc:      "every event the executor reports is an enabled rule of the model of its stated policy",
		Contract: "model conformance",
		Fails:    "the executor's trace does not conform to the model",
		Shape:    Shape{Repeat: true, Spawn: true, Panics: true},
		Applies:  reports,
		Check:    checkConform,
		Costly:   true,
	},
	{
		Name:     checkWorkConserve,
		Doc:      "no worker sleeps while a task waits that it could take: a parked worker for which the model enables a take stays parked for at most 16 polls of other workers (controlled cases)",
		Contract: "work conservation",
		Fails:    "a worker slept while a task waited that it could take",
		Shape:    Shape{Endless: true, EndlessPolls: 24},
		Applies:  reportsControllable,
		Check:    checkConserve,
		Costly:   true,
	},
	{
		Name:     checkLinearizable,
		Doc:      "the executor's recorded history of queue operations and task steps is linearizable to the model's sequential specifications",
		Contract: "linearizability",
		Fails:    "the executor's history is not linearizable",
		Shape:    Shape{MaxTasks: 4, MaxPending: 2, Spawn: true},
		Applies:  reports,
		Check:    checkLinear,
		Costly:   true,
	},
}

// violations fails on the violations of check seen while the case ran,
// identical ones folded into one line with their count.
func violations(check string) func(o *Observation) error {
	return func(o *Observation) error {
		var lines []string
		for _, v := range o.Violations {
			if v.check == check {
				lines = append(lines, v.detail)
			}
		}
		if len(lines) == 0 {
			return nil
		}
		return errors.New(text.FoldLines(strings.Join(lines, "\n")))
	}
}

// checkRepoll fails on polls of a finished task: the first with its
// detail, the count of the others.
func checkRepoll(o *Observation) error {
	err := violations(checkPollAfterReady)(o)
	if err == nil {
		return nil
	}
	s := err.Error()
	for _, t := range o.Tasks {
		if t.Repolls > 1 {
			s += fmt.Sprintf("\ntask %d was polled %d times in all after it finished at poll %d", t.ID, t.Repolls, t.FinishedAt)
		}
	}
	return errors.New(s)
}

func checkOnce(o *Observation) error {
	errs := []error{violations(checkExactlyOnce)(o)}
	for _, t := range o.Tasks {
		if t.Completions > 1 {
			errs = append(errs, fmt.Errorf("task %d completed %d times", t.ID, t.Completions))
		}
	}
	switch o.End {
	case EndWait:
		if o.WaitErr != nil {
			errs = append(errs, fmt.Errorf("Wait returned %w", o.WaitErr))
		}
		for _, t := range o.Tasks {
			if t.Spawned && !t.Finished {
				errs = append(errs, fmt.Errorf("Wait returned but task %d had not completed (%d polls)", t.ID, len(t.Polls)))
			}
		}
		if o.CloseErr != nil {
			errs = append(errs, fmt.Errorf("Close after Wait returned %w", o.CloseErr))
		}
		for _, s := range o.JoinErrs {
			errs = append(errs, errors.New(s))
		}
	case EndHang:
		for _, t := range o.Tasks {
			if t.Spawned && len(t.Polls) == 0 {
				errs = append(errs, fmt.Errorf("task %d was spawned and never polled", t.ID))
			}
		}
	}
	return errors.Join(errs...)
}

// lost fails when the case hung with a task that was woken after its last
// poll began and was never polled again, and every such wake satisfies
// kind.
func lost(kind func(wakeRec) bool) func(o *Observation) error {
	return func(o *Observation) error {
		if o.End != EndHang {
			return nil
		}
		var errs []error
		for i := range o.Tasks {
			t := &o.Tasks[i]
			ws := t.lostWakes()
			if len(ws) == 0 {
				continue
			}
			all := true
			for _, w := range ws {
				all = all && kind(w)
			}
			if all {
				errs = append(errs, fmt.Errorf("task %d: its last poll began @%d; then %s; it was never polled again", t.ID, t.Polls[len(t.Polls)-1].begin, wakeList(ws)))
			}
		}
		return errors.Join(errs...)
	}
}

func wakeList(ws []wakeRec) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.String()
	}
	return strings.Join(parts, ", ")
}

func checkIdempotent(o *Observation) error {
	if !o.WakeDriven {
		// Spurious polls are allowed by the waker contract: counted
		// (Observation.Spurious) and reported, not failed.
		return nil
	}
	var errs []error
	for _, t := range o.Tasks {
		if n, i := spuriousPolls(&t); n > 0 {
			errs = append(errs, fmt.Errorf("task %d: poll %d (@%d) cannot be matched to a wake of its own since poll %d began (@%d), and the executor states it never polls spuriously; polls: %v; wakes: %s",
				t.ID, i+1, t.Polls[i].begin, i, t.Polls[i-1].begin, t.Polls, wakeList(t.Wakes)))
		}
	}
	return errors.Join(errs...)
}

// spuriousPolls returns how many polls of t no wake accounts for (spurious
// polls), and the index of the first. Each wake accounts for one poll at most. From outside,
// a take is not seen, only the poll that follows it, and a wake that lands
// between the take of poll i-1 and its Poll call rightly makes the task
// NOTIFIED and earns poll i. So poll i needs a wake of its own whose call
// came before poll i began and whose return came after poll i-2 ended
// (after which the take of poll i-1 happened). The matching is greedy in
// poll order, taking the eligible wake that returned first, which is
// optimal for these interval constraints. Duplicates that the window
// allows are caught as a poll after Ready or a concurrent poll instead.
func spuriousPolls(t *TaskObservation) (n, first int) {
	// Wakes are sorted by call time; a sweep over the polls adds the wakes
	// called before each poll to a heap ordered by return time, drops the
	// ones that returned too early (the bound only grows), and takes the
	// first to return: O((polls + wakes) log wakes).
	var h retHeap
	next := 0
	for i := 1; i < len(t.Polls); i++ {
		cur := t.Polls[i].begin
		var after uint64
		if i >= 2 {
			after = t.Polls[i-2].end
		}
		for next < len(t.Wakes) && t.Wakes[next].seq < cur {
			heap.Push(&h, t.Wakes[next].returned())
			next++
		}
		for h.Len() > 0 && h[0] <= after {
			heap.Pop(&h)
		}
		if h.Len() == 0 {
			// Unmatched: spurious. It takes no wake, and the polls after
			// it are matched as before.
			if n == 0 {
				first = i
			}
			n++
			continue
		}
		heap.Pop(&h)
	}
	return n, first
}

type retHeap []uint64

func (h retHeap) Len() int           { return len(h) }
func (h retHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h retHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *retHeap) Push(x any)        { *h = append(*h, x.(uint64)) }
func (h *retHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func checkLive(o *Observation) error {
	if o.End != EndHang {
		return nil
	}
	var waiting []string
	for _, t := range o.Tasks {
		if t.Spawned && !t.Finished {
			s := fmt.Sprintf("task %d (%d polls", t.ID, len(t.Polls))
			if n := len(t.Polls); n > 0 {
				s += fmt.Sprintf(", last @%d", t.Polls[n-1].begin)
			}
			if ws := t.lostWakes(); len(ws) > 0 {
				s += ", then " + wakeList(ws)
			} else {
				s += ", no wake since"
			}
			waiting = append(waiting, s+")")
		}
	}
	how := "no progress for the idle limit"
	if o.Control != nil {
		how = o.Control.Error()
	}
	if len(waiting) == 0 {
		return fmt.Errorf("every task completed but Wait or Close did not return (%s)", how)
	}
	return fmt.Errorf("%s; unfinished: %s", how, strings.Join(waiting, "; "))
}

func checkClose(o *Observation) error {
	if o.End != EndClose {
		return nil
	}
	var errs []error
	if o.CloseErr != nil {
		errs = append(errs, fmt.Errorf("Close returned %w", o.CloseErr))
	}
	for _, t := range o.Tasks {
		if t.Spawned && !t.Finished {
			errs = append(errs, fmt.Errorf("Close returned but task %d had not completed (%d polls)", t.ID, len(t.Polls)))
		}
	}
	return errors.Join(errs...)
}
