package executor

import "sync/atomic"

// State is the state of a task in the model (model.TaskState has the same
// values): what TaskState holds.
type State uint8

// Task states.
const (
	Idle     State = 0                 // not spawned
	Queued   State = State(stQueued)   // in exactly one queue
	Running  State = State(stRunning)  // being polled by one worker
	Waiting  State = State(stWaiting)  // Pending returned, waker registered
	Notified State = State(stNotified) // woken while running: queued again when the poll returns
	Done     State = State(stDone)     // finished; never polled again
)

var stateNames = [...]string{"IDLE", "QUEUED", "RUNNING", "WAITING", "NOTIFIED", "DONE"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(?)"
}

// TaskState is the state word of one task, with the transitions of the
// model's rules, for an executor that keeps its own task type (Kit's tasks
// have one already). Every transition is a compare-and-swap on one word
// that also counts transitions (no ABA), the same word the built-in
// executors keep. The rules make "exactly one party queues the task after
// each poll" hold: a wake and the end of a poll race on the word, and
// exactly one of them sees the other.
//
// The zero TaskState is IDLE. Safe for concurrent use: Wake from any
// goroutine; Take, Suspend and Complete from the worker that runs the task.
type TaskState struct {
	w atomic.Uint64
}

// Load returns the current state.
func (s *TaskState) Load() State { return State(s.w.Load() & stMask) }

// Spawn is SPAWN: IDLE → QUEUED. The caller then pushes the task.
func (s *TaskState) Spawn() { s.w.Store(to(s.w.Load(), stQueued)) }

// Take is the take of a task from a queue (POLL-LOCAL, GLOBAL-STEAL,
// WORKER-STEAL): QUEUED → RUNNING. It returns false, and changes nothing,
// if the task was not QUEUED (a queue that held it twice: a bug).
func (s *TaskState) Take() bool {
	for {
		old := s.w.Load()
		if old&stMask != stQueued {
			return false
		}
		if s.w.CompareAndSwap(old, to(old, stRunning)) {
			return true
		}
	}
}

// Wake is WAKE: WAITING → QUEUED, and then it returns true: the caller
// must push the task (it is the one party that does). RUNNING → NOTIFIED;
// QUEUED, NOTIFIED and DONE stay as they are (wakes coalesce); those
// return false.
func (s *TaskState) Wake() (push bool) {
	for {
		old := s.w.Load()
		var next uint64
		switch old & stMask {
		case stWaiting:
			next = stQueued
		case stRunning:
			next = stNotified
		default:
			return false
		}
		if s.w.CompareAndSwap(old, to(old, next)) {
			return next == stQueued
		}
	}
}

// Suspend is TASK-SUSPEND, after a poll returned Pending: RUNNING →
// WAITING (false), or, if the task was NOTIFIED during the poll, NOTIFIED
// → QUEUED, and then it returns true: the caller must push the task again
// (the wake is not lost).
func (s *TaskState) Suspend() (push bool) {
	for {
		old := s.w.Load()
		next := stWaiting
		if old&stMask == stNotified {
			next = stQueued
		}
		if s.w.CompareAndSwap(old, to(old, next)) {
			return next == stQueued
		}
	}
}

// Complete is TASK-COMPLETE: the task is DONE and must never be polled
// again.
func (s *TaskState) Complete() {
	for {
		old := s.w.Load()
		if s.w.CompareAndSwap(old, to(old, stDone)) {
			return
		}
	}
}
