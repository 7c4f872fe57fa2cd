package traces

import (
	"fmt"

	"github.com/execspec/execspec/model"
)

// MaxWorkers bounds Header.Workers, so that a reader's consumers can size
// tables by it without trusting a hostile file.
const MaxWorkers = 1 << 16

// CheckHeader reports whether h is a version-1 header this package can read:
// the format name, the version, and 1 ≤ Workers ≤ MaxWorkers.
func CheckHeader(h Header) error {
	if h.Format != Format {
		return errf(ErrVersion, fmt.Sprintf("unknown trace format %q (want %q)", h.Format, Format))
	}
	if h.Version != Version {
		return errf(ErrVersion, fmt.Sprintf("unknown trace version %d (this reader knows version %d)", h.Version, Version))
	}
	if h.Workers < 1 || h.Workers > MaxWorkers {
		return errf(ErrRange, fmt.Sprintf("header: workers = %d, want 1 to %d", h.Workers, MaxWorkers))
	}
	return nil
}

// needsTask and needsWorker say, per Kind, whether an event of that kind is
// about a task, and whether it happens on a worker.
var (
	needsTask   = [KindRegister + 1]bool{KindSpawn: true, KindTake: true, KindPollBegin: true, KindPollEnd: true, KindWake: true, KindRequeue: true, KindPanic: true, KindRegister: true}
	needsWorker = [KindRegister + 1]bool{KindTake: true, KindPollBegin: true, KindPollEnd: true, KindPark: true, KindUnpark: true, KindRegister: true}
	noTask      = [KindRegister + 1]bool{KindPark: true, KindUnpark: true}
)

// Validate reports whether e is a well-formed event of a trace with header
// h: a known kind; a task id ≥ 1 for the kinds that are about a task, and
// none for park and unpark; a worker in [0, h.Workers) for the kinds that
// happen on a worker, in [-1, h.Workers) otherwise; a source only on a take,
// a victim worker for a steal; a result on every poll-end and only there; an
// outcome only on a wake; a local queue of an existing worker; a rule on
// every step. Victim is ignored unless Source is SourceSteal.
//
// Validate checks the form of one event, not whether it is an enabled rule
// of the model: that is what conformance checking does.
func Validate(h Header, e Event) error {
	k := e.Kind
	if !k.Valid() {
		return errf(ErrUnknown, fmt.Sprintf("unknown event kind %d", uint8(k)))
	}
	switch {
	case e.Task < 0:
		return errf(ErrRange, fmt.Sprintf("%s event for task %d: task ids start at 1", k, e.Task))
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
			return errf(ErrUnknown, "poll-end event without a result: want pending, ready or panic")
		}
		return errf(ErrUnknown, fmt.Sprintf("%s event with result %s: only a poll-end has a result", k, e.Result))
	}
	if int(e.Outcome) >= len(outcomeNames) {
		return errf(ErrUnknown, fmt.Sprintf("unknown wake outcome %d", uint8(e.Outcome)))
	}
	if e.Outcome != OutcomeNone && k != KindWake {
		return errf(ErrUnknown, fmt.Sprintf("%s event with outcome %s: only a wake has an outcome", k, e.Outcome))
	}
	if e.Queue < QueueGlobal || e.Queue.Worker() >= h.Workers {
		return errf(ErrRange, fmt.Sprintf("%s event on queue %s: the header declares %d workers", k, e.Queue, h.Workers))
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
