package traces

import "github.com/execspec/execspec/model"

// Kind is what an event reports. The kinds map onto the rules of the model:
// see each constant.
type Kind uint8

// Event kinds. The zero Kind is invalid.
const (
	// KindSpawn: SPAWN. Task is the new task; Worker the spawning worker
	// (-1 from outside); Queue where it was pushed.
	KindSpawn Kind = iota + 1
	// KindTake: POLL-LOCAL, GLOBAL-STEAL or WORKER-STEAL, by Source. Worker
	// took Task; Victim is the robbed worker for SourceSteal.
	KindTake
	// KindPollBegin: the worker starts calling the future's Poll.
	KindPollBegin
	// KindPollEnd: Poll returned Result. Pending ends in TASK-SUSPEND,
	// Ready in TASK-COMPLETE, Panic in a failed task (DONE, or re-run by a
	// retry policy).
	KindPollEnd
	// KindWake: WAKE, with its Outcome. Worker is the waking worker, -1 from
	// outside; Queue is where a Scheduled task was pushed.
	KindWake
	// KindRequeue: the task was re-queued at the end of its poll because it
	// was NOTIFIED during it (TASK-SUSPEND's second case) or by a time-slice
	// or retry policy. Queue says where.
	KindRequeue
	// KindPark: Worker found nothing to do and blocks.
	KindPark
	// KindUnpark: Worker was woken up to look for work again.
	KindUnpark
	// KindPanic: the future panicked; Detail holds the value and stack.
	KindPanic
	// KindStep: a model-checker step that is not an executor observation
	// (POLL-PENDING in a counterexample). Rule names it.
	KindStep
	// KindRegister: POLL-PENDING. Worker's poll of Task registered the
	// task's waker and will return Pending; a wake may come before the
	// poll-end. Optional: a poll-end pending without it implies it.
	KindRegister
	// KindStop (format v1.1): the executor stopped (Worker -1: shutdown, or
	// the runtime dropped) or one worker stopped (its thread exited or
	// unwound). No event of the executor, or of that worker, may follow.
	KindStop
)

// Source is where a take found its task.
type Source uint8

// Sources of a take. The zero Source is "none".
const (
	SourceNone   Source = iota
	SourceLocal         // POLL-LOCAL: the owner end of the worker's own queue
	SourceGlobal        // GLOBAL-STEAL: the head of the global queue
	SourceSteal         // WORKER-STEAL: the steal end of Victim's queue
	SourceLIFO          // POLL-LOCAL through the LIFO slot
)

// Result is what a poll returned.
type Result uint8

// Poll results. The zero Result is "none".
const (
	ResultNone Result = iota
	ResultPending
	ResultReady
	ResultPanic
	// ResultError (format v1.1): the future returned Ready(Err): a failed
	// task, as after a panic, that did not panic.
	ResultError
)

// Outcome is what a wake did.
type Outcome uint8

// Wake outcomes. The zero Outcome is "none".
const (
	OutcomeNone      Outcome = iota
	OutcomeScheduled         // WAITING → QUEUED
	OutcomeNotified          // RUNNING → NOTIFIED
	OutcomeCoalesced         // already QUEUED or NOTIFIED: nothing to do
	OutcomeLate              // the task is DONE: ignored
	// OutcomeDropped: the waker did nothing although the rules say it
	// must (a RUNNING task not marked NOTIFIED, a WAITING task not
	// queued). Never enabled: an executor that reports it, or a broken
	// model variant that does it, departs from WAKE at this event.
	OutcomeDropped
)

// Queue names where a task was pushed: the global queue or a worker's local
// queue. The zero value is "none".
type Queue int32

// QueueNone and QueueGlobal are the two queues that are not local queues;
// LocalQueue(w) names worker w's queue.
const (
	QueueNone   Queue = 0
	QueueGlobal Queue = -1
)

// LocalQueue returns the Queue value for worker w's local queue.
func LocalQueue(w int) Queue { return Queue(w + 1) }

// Worker returns the worker whose local queue q is, or -1.
func (q Queue) Worker() int {
	if q > 0 {
		return int(q) - 1
	}
	return -1
}

// Event is one observation of an executor, or one step of a model-checker
// counterexample. Events are values: 96 bytes, no pointers but Detail, so that
// recording one costs a copy; executors record the 24-byte Packed form.
//
// Seq orders the events of one run: it comes from one atomic logical clock,
// drawn at the point where the operation takes effect (inside the queue's
// critical section). Call and Return bracket queue operations on the same
// clock, for linearizability checking; both are zero when not recorded.
type Event struct {
	Seq     uint64
	Call    uint64
	Return  uint64
	Task    int64 // task id, from 1; 0 = none
	Worker  int32 // -1 = outside any worker
	Victim  int32 // for SourceSteal; -1 otherwise
	Queue   Queue
	Kind    Kind
	Source  Source
	Result  Result
	Outcome Outcome
	Rule    model.Rule // for KindStep and counterexamples; 0 = implied by Kind
	Detail  string

	// Format v1.1 fields; zero when not recorded.
	Future      int64      // the future instance a poll drives, from 1; 0 = not recorded
	Time        int64      // monotonic nanoseconds since any origin; 0 = not recorded
	Priority    int32      // the task's priority (higher runs first), when Prioritized
	Prioritized bool       // Priority was recorded (on spawn, wake, requeue)
	Reason      StopReason // on a stop: why (StopShutdown, the zero value, when not recorded)
}

// Format and Version identify the trace format in a Header; Minor is the
// newest minor version a reader accepts (a v1.1 trace says "minor":1).
const (
	Format  = "execspec-trace"
	Version = 1
	Minor   = 1
)

// Orders of a trace's Seq (Header.Order).
const (
	// OrderSeq: each event's Seq was drawn where its operation took effect
	// (inside the queue's critical section). The default.
	OrderSeq = "seq"
	// OrderIntervals (v1.1): queue operations carry Call and Return ticks,
	// and Seq is the Call of a push and the Return of a take; the checker
	// accepts any order of overlapping operations the model accepts.
	OrderIntervals = "intervals"
)

// Header is the first line of a trace: what produced it and under which
// policy of the model it is to be checked. Policy is a model policy name
// ("fifo", "worksteal", "priority", "timeslice", "retry"); Config holds the
// policy's integer parameters by name ("local-cap", "global-interval",
// "owner-lifo", "lifo-slot", "steal-half", "slice", "retries", ...).
type Header struct {
	Format   string         `json:"format"`
	Version  int            `json:"version"`
	Executor string         `json:"executor"`
	Workers  int            `json:"workers"`
	Policy   string         `json:"policy"`
	Config   map[string]int `json:"config,omitempty"`

	// Format v1.1 (Minor 1).
	Minor      int      `json:"minor,omitempty"`      // 0 or 1
	Order      string   `json:"order,omitempty"`      // "" (= OrderSeq) or OrderIntervals
	Unobserved []string `json:"unobserved,omitempty"` // what the recorder cannot see: take, source, queue, outcome, park
}
