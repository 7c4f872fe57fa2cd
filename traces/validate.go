package traces

import (
	"fmt"
	"slices"
	"strings"

	"github.com/execspec/execspec/model"
)

// MaxWorkers bounds Header.Workers, so that a reader's consumers can size
// tables by it without trusting a hostile file.
const MaxWorkers = 1 << 16

// writtenHeader is h as a writer writes it, an empty Format and a zero
// Version filled in, checked by CheckHeader.
func writtenHeader(h Header) (Header, error) {
	if h.Format == "" {
		h.Format = Format
	}
	if h.Version == 0 {
		h.Version = Version
	}
	return h, CheckHeader(h)
}

// CheckHeader reports whether h is a version-1 header this package can read:
// the format name, the version, the minor version (0 or 1), and 1 ≤ Workers
// ≤ MaxWorkers. The v1.1 fields (Order, Unobserved, and the config keys
// spurious-polls and slice-us) need Minor 1; Order is "seq" or "intervals";
// Unobserved holds distinct names from UnobservedNames.
func CheckHeader(h Header) error {
	if h.Format != Format {
		return errf(ErrVersion, fmt.Sprintf("unknown trace format %q (want %q)", h.Format, Format))
	}
	if h.Version != Version {
		return errf(ErrVersion, fmt.Sprintf("unknown trace version %d (this reader knows version %d)", h.Version, Version))
	}
	if h.Minor < 0 || h.Minor > Minor {
		return errf(ErrVersion, fmt.Sprintf("unknown trace minor version %d (this reader knows v1 and v1.1: minor 0 or 1)", h.Minor))
	}
	if h.Workers < 1 || h.Workers > MaxWorkers {
		return errf(ErrRange, fmt.Sprintf("header: workers = %d, want 1 to %d", h.Workers, MaxWorkers))
	}
	if h.Order != "" {
		if err := needMinor(h, "header: order"); err != nil {
			return err
		}
		if h.Order != OrderSeq && h.Order != OrderIntervals {
			return errf(ErrUnknown, fmt.Sprintf("header: order %q, want %q or %q", h.Order, OrderSeq, OrderIntervals))
		}
	}
	if h.Unobserved != nil {
		if err := needMinor(h, "header: unobserved"); err != nil {
			return err
		}
		var seen [len(UnobservedNames)]bool
		for _, u := range h.Unobserved {
			i := slices.Index(UnobservedNames[:], u)
			if i < 0 {
				return errf(ErrUnknown, fmt.Sprintf("header: unobserved %q, want names from %s", u, strings.Join(UnobservedNames[:], ", ")))
			}
			if seen[i] {
				return errf(ErrSyntax, fmt.Sprintf("header: unobserved names %q twice", u))
			}
			seen[i] = true
		}
	}
	for _, k := range v11ConfigKeys {
		if _, ok := h.Config[k]; ok {
			if err := needMinor(h, "header: config key "+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// UnobservedNames are what a v1.1 header's unobserved may list: what the
// recorder cannot see (takes, a take's source, a push's queue, a wake's
// outcome, parks).
var UnobservedNames = [...]string{"take", "source", "queue", "outcome", "park"}

// v11ConfigKeys are the config keys format v1.1 added.
var v11ConfigKeys = []string{"spurious-polls", "slice-us"}

// needMinor rejects what only format v1.1 has in a trace whose header does
// not say "minor":1.
func needMinor(h Header, what string) error {
	if h.Minor >= 1 {
		return nil
	}
	return errf(ErrVersion, what+` is trace format v1.1: add "minor":1 to the header`)
}

// needsTask and needsWorker say, per Kind, whether an event of that kind is
// about a task, and whether it happens on a worker.
var (
	needsTask   = [KindStop + 1]bool{KindSpawn: true, KindTake: true, KindPollBegin: true, KindPollEnd: true, KindWake: true, KindRequeue: true, KindPanic: true, KindRegister: true}
	needsWorker = [KindStop + 1]bool{KindTake: true, KindPollBegin: true, KindPollEnd: true, KindPark: true, KindUnpark: true, KindRegister: true}
	noTask      = [KindStop + 1]bool{KindPark: true, KindUnpark: true, KindStop: true}
	// hasFuture and hasPriority: the kinds that may carry a future id, and
	// a priority (v1.1).
	hasFuture   = [KindStop + 1]bool{KindPollBegin: true, KindPollEnd: true, KindRegister: true}
	hasPriority = [KindStop + 1]bool{KindSpawn: true, KindWake: true, KindRequeue: true}
	// hasQueue: the kinds that push a task onto a queue (a model step: its destination).
	hasQueue = [KindStop + 1]bool{KindSpawn: true, KindWake: true, KindRequeue: true, KindStep: true}
)

// Validate reports whether e is a well-formed event of a trace with header
// h: a known kind; a task id ≥ 1 for the kinds that are about a task, and
// none for park and unpark; a worker in [0, h.Workers) for the kinds that
// happen on a worker, in [-1, h.Workers) otherwise; a source only on a take,
// a victim worker for a steal; a result on every poll-end and only there; an
// outcome only on a wake; a local queue of an existing worker; a rule on
// every step. Victim is ignored unless Source is SourceSteal.
//
// Format v1.1 (h.Minor 1) adds the kind stop (no task), the result error,
// a wake with no task (a no-op waker: no outcome, no queue), a future id ≥ 1
// on poll-begin, poll-end and register, a time ≥ 0 on any event, and a
// priority on spawn, wake and requeue. Any of them in a trace whose header
// is not v1.1 is an error that says to add "minor":1.
//
// Validate checks the form of one event, not whether it is an enabled rule
// of the model: that is what conformance checking does.
func Validate(h Header, e Event) error {
	k := e.Kind
	if !k.Valid() {
		return errf(ErrUnknown, fmt.Sprintf("unknown event kind %d", uint8(k)))
	}
	if k == KindStop || e.Result == ResultError || e.Future|e.Time != 0 || e.Prioritized || e.Priority != 0 || (e.Task == 0 && k == KindWake) {
		if err := validateV11(h, e); err != nil {
			return err
		}
	}
	switch {
	case e.Task < 0:
		return errf(ErrRange, fmt.Sprintf("%s event for task %d: task ids start at 1", k, e.Task))
	case e.Task == 0 && k == KindWake && h.Minor >= 1:
		if e.Outcome != OutcomeNone || e.Queue != QueueNone {
			return errf(ErrUnknown, "wake event without a task (a no-op waker) with an outcome or a queue: a wake that names no task has neither")
		}
	case e.Task == 0 && needsTask[k]:
		return errf(ErrRange, fmt.Sprintf("%s event without a task: want a task id ≥ 1", k))
	case e.Task != 0 && noTask[k]:
		return errf(ErrRange, fmt.Sprintf("%s event with task %d: a %s is about a worker, not a task", k, e.Task, k))
	}
	if e.Worker < -1 || int(e.Worker) >= h.Workers {
		return errf(ErrRange, fmt.Sprintf("%s event on worker %d: the header declares %d workers (0 to %d, or -1 for outside)", k, e.Worker, h.Workers, h.Workers-1))
	}
	if e.Worker < 0 && needsWorker[k] {
		return errf(ErrRange, fmt.Sprintf("%s event without a worker: a %s happens on a worker", k, k))
	}
	if e.Source != SourceNone && k != KindTake {
		return errf(ErrUnknown, fmt.Sprintf("%s event with source %s: only a take has a source", k, e.Source))
	}
	if int(e.Source) >= len(sourceNames) {
		return errf(ErrUnknown, fmt.Sprintf("unknown take source %d", uint8(e.Source)))
	}
	if e.Source == SourceSteal && (e.Victim < 0 || int(e.Victim) >= h.Workers) {
		return errf(ErrRange, fmt.Sprintf("steal from worker %d: want a victim from 0 to %d", e.Victim, h.Workers-1))
	}
	if int(e.Result) >= len(resultNames) {
		return errf(ErrUnknown, fmt.Sprintf("unknown poll result %d", uint8(e.Result)))
	}
	if (e.Result != ResultNone) != (k == KindPollEnd) {
		if k == KindPollEnd {
			return errf(ErrUnknown, "poll-end event without a result: want pending, ready, panic or error (v1.1)")
		}
		return errf(ErrUnknown, fmt.Sprintf("%s event with result %s: only a poll-end has a result", k, e.Result))
	}
	if int(e.Outcome) >= len(outcomeNames) {
		return errf(ErrUnknown, fmt.Sprintf("unknown wake outcome %d", uint8(e.Outcome)))
	}
	if e.Outcome != OutcomeNone && k != KindWake {
		return errf(ErrUnknown, fmt.Sprintf("%s event with outcome %s: only a wake has an outcome", k, e.Outcome))
	}
	if e.Queue != QueueNone && !hasQueue[k] {
		return errf(ErrUnknown, fmt.Sprintf("%s event with queue %s: only spawn, wake, requeue and a model step push a task onto a queue", k, e.Queue))
	}
	if e.Queue < QueueGlobal || e.Queue.Worker() >= h.Workers {
		return errf(ErrRange, fmt.Sprintf("%s event on queue %s: the header declares %d workers", k, e.Queue, h.Workers))
	}
	if int(e.Reason) >= len(stopReasonNames) {
		return errf(ErrUnknown, fmt.Sprintf("unknown stop reason %d", uint8(e.Reason)))
	}
	if e.Reason != StopShutdown && k != KindStop {
		return errf(ErrUnknown, fmt.Sprintf("%s event with reason %s: only a stop has a reason", k, e.Reason))
	}
	if e.Rule != 0 && (int(e.Rule) >= model.NumRules) {
		return errf(ErrUnknown, fmt.Sprintf("unknown rule %d", uint8(e.Rule)))
	}
	if k == KindStep && e.Rule == 0 {
		return errf(ErrUnknown, "step event without a rule: want one of the model's rule names")
	}
	return nil
}

// canonical returns e as a reader returns it: Victim is -1 unless e is a
// steal. Two events that write the same line are equal after canonical.
func canonical(e Event) Event {
	if e.Source != SourceSteal {
		e.Victim = -1
	}
	return e
}

// validateV11 checks the fields and values format v1.1 added.
func validateV11(h Header, e Event) error {
	k := e.Kind
	var what string
	switch {
	case k == KindStop:
		what = "the kind stop"
	case e.Result == ResultError:
		what = "the result error"
	case k == KindWake && e.Task == 0:
		what = "a wake without a task"
	case e.Prioritized || e.Priority != 0:
		what = "the field priority"
	case e.Future != 0:
		what = "the field future"
	case e.Time != 0:
		what = "the field time"
	default:
		return nil
	}
	if err := needMinor(h, what); err != nil {
		return err
	}
	switch {
	case e.Future < 0:
		return errf(ErrRange, fmt.Sprintf("%s event with future %d: future ids start at 1", k, e.Future))
	case e.Future != 0 && !hasFuture[k]:
		return errf(ErrUnknown, fmt.Sprintf("%s event with a future: only poll-begin, poll-end and register drive a future", k))
	case e.Time < 0:
		return errf(ErrRange, fmt.Sprintf("%s event at time %d: want nanoseconds ≥ 0", k, e.Time))
	case e.Priority != 0 && !e.Prioritized:
		return errf(ErrUnknown, fmt.Sprintf("%s event with priority %d but Prioritized false", k, e.Priority))
	case e.Prioritized && !hasPriority[k]:
		return errf(ErrUnknown, fmt.Sprintf("%s event with a priority: only spawn, wake and requeue set a task's priority", k))
	case e.Prioritized && h.Policy != "priority":
		return errf(ErrUnknown, fmt.Sprintf("%s event with a priority under policy %s: only policy priority orders tasks by priority", k, nonEmptyPolicy(h.Policy)))
	}
	return nil
}

// nonEmptyPolicy names the policy of a header, whose empty policy is the
// model's default.
func nonEmptyPolicy(p string) string {
	if p == "" {
		return "worksteal"
	}
	return p
}
