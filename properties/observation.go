package properties

import (
	"time"

	"github.com/execspec/execspec/traces"
)

// End is how a case ended.
type End uint8

// How a case ends.
const (
	EndWait      End = iota + 1 // Wait (then Close) returned
	EndClose                    // Close returned
	EndViolation                // a safety violation stopped the case early
	EndHang                     // nothing happened for Config.Idle (twice that while a goroutine could still run), or Config.Timeout passed; under control, a deadlock
	EndBudget                   // under control, the step budget ran out: no verdict
)

func (e End) String() string {
	switch e {
	case EndWait:
		return "wait returned"
	case EndClose:
		return "close returned"
	case EndViolation:
		return "stopped at a violation"
	case EndHang:
		return "hung"
	case EndBudget:
		return "out of steps"
	}
	return "unknown"
}

// TaskObservation is what the workload saw of one task.
type TaskObservation struct {
	ID          int
	Spawned     bool
	Finished    bool
	Completions int
	Panics      bool
	Polls       []pollRec
	Wakes       []wakeRec
	// Dropped counts the polls and wakes past the record limit of a task
	// (16,384 of each in one case) that replaced the latest record instead
	// of being kept.
	Dropped int
	// FinishedAt is the poll (from 1) at which the task finished, and
	// Repolls the polls that came after it (each a failure of
	// no-poll-after-ready; the first is reported with its detail).
	FinishedAt, Repolls int
}

// lostWakes returns the wakes after the task's last poll began, if it is
// not finished: wakes that a correct executor must still answer with a poll.
func (t *TaskObservation) lostWakes() []wakeRec {
	if t.Finished || !t.Spawned || len(t.Polls) == 0 {
		return nil
	}
	last := t.Polls[len(t.Polls)-1].begin
	var out []wakeRec
	for _, w := range t.Wakes {
		if w.seq > last {
			out = append(out, w)
		}
	}
	return out
}

// Observation is everything one case saw: the input of every check.
type Observation struct {
	Workload   *Workload
	End        End
	Elapsed    time.Duration
	Tasks      []TaskObservation
	Violations []violation
	// MoreViolations counts the violations past the 32 a case keeps
	// (Violations), counted but not kept.
	MoreViolations int
	WaitErr        error
	CloseErr       error
	JoinErrs       []string
	MaxDelay       int64 // the most polls of other tasks between a task becoming ready and its poll
	MaxHeld        int64 // the most of those the least busy worker ended: what a bound in polls is checked against (heldPolls)
	Bound          int   // the executor's stated fairness bound for this case, -1 if none
	// BoundWait is the fairness bound in time the executor states (or
	// Config.FairnessWait), 0 if none; MaxWait the longest a ready task
	// waited for its poll, by the clock; FairnessStated what the check held
	// the executor to ("polls", "time", "default", or "none promised");
	// Starved, when the executor promises no fairness, describes a task
	// that seemed starved (information: the case then stopped without a
	// verdict).
	BoundWait      time.Duration
	MaxWait        time.Duration
	FairnessStated string
	Starved        string
	// WakeDriven says the executor states that it never polls a task
	// spuriously (executor.SpuriousPoller): then a spurious poll fails
	// waker-idempotence; otherwise spurious polls are counted (Spurious)
	// and reported as information.
	WakeDriven bool
	// Spurious counts the polls that no wake accounts for (see
	// waker-idempotence), and SpuriousTasks the tasks that had any.
	Spurious, SpuriousTasks int
	Header                  *traces.Header
	Events                  []traces.Event
	// Controlled says the case ran under a control.Controller: its
	// interleaving was chosen, and replays exactly. Checksum is then the
	// controller's checksum of the run (its steps, and the events the
	// executor reported), equal on an exact replay, and Decisions the
	// number of scheduling choices made.
	Controlled bool
	PCT        bool // the controlled schedule was PCT's (Config.PCTDepth)
	// Instrumented says the controlled case ran on the instrumented
	// engine (instrument/rt), not on a control.Controller.
	Instrumented bool
	Checksum     uint64
	Decisions    int
	// Control is the controller's error for a controlled case that did not
	// end cleanly: a deadlock (every goroutine blocked), a panic that
	// escaped the executor, a stall, or the step budget.
	Control error
	// HangStacks, for a case run as a black box that ended in a hang, is
	// every goroutine's stack when the hang was called (at most
	// maxHangStacks bytes): where the executor's workers, and the wakes
	// that never returned, were waiting. Run writes it into the failure's
	// full detail.
	HangStacks string
}
