package partial

import (
	"fmt"
	"slices"
	"strings"

	"github.com/execspec/execspec/traces"
)

// Observations a recorder may be unable to see (traces.Header.Unobserved).
const (
	ObsTake    = "take"    // take events: when, and by which worker, a task left a queue
	ObsSource  = "source"  // a take's source: which queue it took from
	ObsQueue   = "queue"   // the queue of a push (spawn, wake, requeue)
	ObsOutcome = "outcome" // a wake's outcome
	ObsPark    = "park"    // park and unpark events
)

// observations are the names a header's unobserved list may hold, in the
// order reasons name them.
var observations = []string{ObsTake, ObsSource, ObsQueue, ObsOutcome, ObsPark}

// obsWhy says what a trace without an observation does not show.
var obsWhy = map[string]string{
	ObsTake:    "no takes recorded",
	ObsSource:  "takes name no queue",
	ObsQueue:   "pushes name no queue",
	ObsOutcome: "wakes carry no outcome",
	ObsPark:    "no parks recorded",
}

// Rule is one rule, or one premise of a rule, as a partially
// observed trace may or may not show it: a declared value, so that the list
// can be printed and each report can say which ones it checked. A rule is
// checked when every observation in Needs is observed (and, for a Replay
// rule, the model can replay the header's policy); otherwise the report
// names it with the reason, derived from what is unobserved.
type Rule struct {
	Name  string // stable, kebab-case
	Rules string // the model rules it protects, e.g. "TASK-COMPLETE"; "" for a form check
	Doc   string // one line: what it checks
	// Needs are the observations it needs beyond spawn, poll-begin,
	// poll-end and wake (which every trace records).
	Needs []string
	// Replay marks rules checked by replaying the trace through the model
	// (conform.Conformance): they need the queues' contents, so take, source and
	// queue all observed, and a header the model accepts.
	Replay bool
	// Policies, when not empty, limits the rule to these header policies.
	Policies []string
	// Never marks rules that no partially observed trace lets the checker
	// decide; Why says why.
	Never bool
	Why   string
}

var replayNeeds = []string{ObsTake, ObsSource, ObsQueue}

// Rules are the rules Checker knows, in report order: first
// those it decides from what every trace records, then those that need an
// observation, then those decided only by replaying the queues.
var Rules = []Rule{
	{Name: "spawned-once", Rules: "SPAWN", Doc: "a task is spawned once, and polled only after its spawn"},
	{Name: "done-is-final", Rules: "TASK-COMPLETE", Doc: "a task whose poll returned Ready (or failed, without a retry policy) is never polled again; under the retry policy a failed task is run again at most retries times"},
	{Name: "exclusive-poll", Rules: "POLL-LOCAL, GLOBAL-STEAL, WORKER-STEAL", Doc: "no task is polled by two workers at once (nor twice at once by one)"},
	{Name: "one-poll-per-worker", Rules: "TASK-SUSPEND, TASK-COMPLETE", Doc: "a worker polls one task at a time, and a poll-end or register is by the worker polling that task"},
	{Name: "future-instance", Rules: "TASK-COMPLETE", Doc: "a finished future instance (poll-end ready, panic or error) is never polled again, and a poll ends the instance it began (needs future ids; without them nothing to check)"},
	{Name: "woken-before-poll", Rules: "TASK-SUSPEND", Doc: "after Pending a task is polled again, or re-queued, only if woken since its last poll began (unless the header declares spurious-polls: 1; such polls are counted)"},
	{Name: "wake-of-spawned", Rules: "WAKE", Doc: "a wake names a spawned task; a wake naming no task (a no-op waker) is counted, never a violation"},
	{Name: "lost-wakeup", Rules: "WAKE", Doc: "a wake of a task that is not DONE, after its last poll began, is followed by a poll of the task unless that poll returned Ready (the waker's scheduling guarantee): tasks for which it is not are named at the end (verdict unknown)"},
	{Name: "stop-is-final", Doc: "no event follows a stop of the executor, and no event of a worker follows that worker's stop"},
	{Name: "time-per-worker", Doc: "time is non-decreasing per worker"},
	{Name: "wake-outcome", Rules: "WAKE", Needs: []string{ObsOutcome}, Doc: "a wake's outcome is WAKE's for the task's state: WAITING scheduled, RUNNING notified (the NOTIFIED marking), QUEUED or NOTIFIED coalesced, DONE late; with takes unobserved a queued task not yet polled may also be notified (it may have been taken)"},
	{Name: "take-of-queued", Rules: "POLL-LOCAL, GLOBAL-STEAL, WORKER-STEAL", Needs: []string{ObsTake}, Doc: "a task is taken only while queued (spawned, or woken since its last Pending), by a worker that polls nothing"},
	{Name: "spawn-placement", Rules: "SPAWN", Needs: replayNeeds, Replay: true, Doc: "a spawned task is pushed where SPAWN says (the global queue, or the spawning worker's local queue)"},
	{Name: "take-rules", Rules: "POLL-LOCAL, GLOBAL-STEAL, WORKER-STEAL", Needs: replayNeeds, Replay: true, Doc: "each take's premises: the queue it takes from, the end, and the order of queues (local, then global, then steal)"},
	{Name: "wake-placement", Rules: "WAKE", Needs: replayNeeds, Replay: true, Doc: "a scheduled task is pushed where WAKE says"},
	{Name: "notified-requeue", Rules: "TASK-SUSPEND", Needs: replayNeeds, Replay: true, Doc: "a task NOTIFIED during its poll is re-queued where TASK-SUSPEND says when the poll returns Pending (the lost-wakeup rule checks only that it is polled again)"},
	{Name: "capacity-overflow", Rules: "SPAWN, WAKE", Needs: replayNeeds, Replay: true, Policies: []string{"", "worksteal"}, Doc: "a push onto a full local queue (local-cap) overflows to the global queue"},
	{Name: "single-queue", Rules: "WAKE", Needs: replayNeeds, Replay: true, Doc: "a task is in at most one queue, once (no duplicate enqueue)"},
	{Name: "slice", Rules: "TASK-SUSPEND", Needs: replayNeeds, Replay: true, Policies: []string{"timeslice"}, Doc: "a task is re-polled in place only within its slice"},
	{Name: "park", Needs: []string{ObsPark, ObsTake, ObsSource, ObsQueue}, Replay: true, Doc: "a worker does not park while work it could take is queued (a warning)"},
	{Name: "priority-order", Rules: "GLOBAL-STEAL", Policies: []string{"priority"}, Never: true, Why: "checked only on a fully observed trace (takes, sources, queues and, format v1.1, priorities recorded); a partially observed trace is not replayed with priorities", Doc: "the global queue is taken in priority order, with aging"},
}

// Unchecked is a rule a partially observed trace did not let the
// checker check, with the reason.
type Unchecked struct {
	Name   string `json:"name"`
	Rules  string `json:"rules,omitempty"`
	Doc    string `json:"doc"`
	Reason string `json:"reason"`
}

func (u Unchecked) String() string {
	r := u.Name
	if u.Rules != "" {
		r += " (" + u.Rules + ")"
	}
	return r + ": " + u.Reason
}

// checkUnobserved checks a header's unobserved list: distinct names of
// observations.
func checkUnobserved(list []string) error {
	seen := map[string]bool{}
	for _, o := range list {
		if !slices.Contains(observations, o) {
			return fmt.Errorf("unobserved: unknown observation %q (known: %s)", o, strings.Join(observations, ", "))
		}
		if seen[o] {
			return fmt.Errorf("unobserved: %q given twice", o)
		}
		seen[o] = true
	}
	return nil
}

// partialScope decides, for header h, which rules are checked and which
// are not, with the reasons. replayErr is why the model cannot replay the
// trace although take, source and queue are observed (nil if it can, or if
// they are not all observed).
func partialScope(h traces.Header, replayErr error) (checked []string, unchecked []Unchecked) {
	unobs := func(o string) bool { return slices.Contains(h.Unobserved, o) }
	for _, r := range Rules {
		if len(r.Policies) > 0 && h.Policy != "unknown" && !slices.Contains(r.Policies, h.Policy) {
			continue
		}
		u := Unchecked{Name: r.Name, Rules: r.Rules, Doc: r.Doc}
		if r.Never {
			u.Reason = r.Why
			unchecked = append(unchecked, u)
			continue
		}
		var why []string
		for _, o := range observations {
			if slices.Contains(r.Needs, o) && unobs(o) {
				why = append(why, o+" unobserved ("+obsWhy[o]+")")
			}
		}
		switch {
		case len(why) > 0 && r.Replay:
			u.Reason = "needs the queues replayed through the model (take, source and queue observed): " + strings.Join(why, "; ")
			unchecked = append(unchecked, u)
		case len(why) > 0:
			u.Reason = strings.Join(why, "; ")
			unchecked = append(unchecked, u)
		case r.Replay && replayErr != nil:
			u.Reason = "the model cannot replay this trace's header: " + replayErr.Error()
			unchecked = append(unchecked, u)
		default:
			checked = append(checked, r.Name)
		}
	}
	return checked, unchecked
}
