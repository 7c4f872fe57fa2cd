package executor

import (
	"errors"
	"fmt"

	"github.com/execspec/execspec/executor/point"
	"github.com/execspec/execspec/traces"
)

// Future is a computation an executor drives by polling. Poll either
// finishes, returning (value, true) — Ready — or returns (nil, false) —
// Pending — after it has arranged for cx.Waker() to be woken when it can make
// progress (POLL-PENDING). A future finishes in one of three ways: Ready with
// a value, Ready with an error (a Failed value), or a panic; the last two
// fail the task, and a retrying executor runs it again from a fresh future
// (Retryable), never by polling the finished one. An executor never polls a future again after it
// returned Ready (TASK-COMPLETE), never polls it from two goroutines at once,
// and polls it again after every wake that came after its last poll began
// (WAKE, TASK-SUSPEND).
type Future interface {
	Poll(cx *Context) (value any, ready bool)
}

// FutureFunc adapts a function to a Future.
type FutureFunc func(cx *Context) (any, bool)

// Poll calls f(cx).
func (f FutureFunc) Poll(cx *Context) (any, bool) { return f(cx) }

// Context is what a poll is given: the waker of the task being polled and
// the worker polling it. A Context is valid only during the Poll call it was
// passed to; keep the Waker, not the Context.
type Context struct {
	waker  Waker
	worker int
}

// NewContext returns a Context for one poll by worker (-1 if unknown). It is
// for executor implementations.
func NewContext(w Waker, worker int) *Context { return &Context{waker: w, worker: worker} }

// Reset reuses cx for another poll, so that an executor allocates no Context
// per poll.
func (cx *Context) Reset(w Waker, worker int) { cx.waker, cx.worker = w, worker }

// Waker returns the waker of the task being polled.
func (cx *Context) Waker() Waker { return cx.waker }

// Register returns the waker of the task being polled, as Waker does, and
// declares that this poll will return Pending (POLL-PENDING): a built-in
// executor records a register event and yields (PointRegister), so that a
// wake may land between the registration and the Pending return. Call it
// at most once per poll, and only in a poll that returns Pending.
func (cx *Context) Register() Waker {
	if r, ok := cx.waker.raw.(Registrar); ok {
		r.Register(cx.worker)
	}
	return cx.waker
}

// Worker returns the index of the worker running the poll, or -1.
func (cx *Context) Worker() int { return cx.worker }

// RawWaker is what an executor implements to be woken; Waker wraps it.
// Wake must be safe from any goroutine, any number of times, and must not
// block. Clone returns a waker that wakes the same task (it may return the
// receiver).
type RawWaker interface {
	Wake()
	Clone() RawWaker
}

// Waker wakes one task (the WAKE rule). The zero Waker wakes nothing.
// Copies of a Waker, and the result of Clone, wake the same task; many wakes
// before the task's next poll lead to one poll.
type Waker struct{ raw RawWaker }

// NewWaker wraps raw. It is for executor implementations.
func NewWaker(raw RawWaker) Waker { return Waker{raw} }

// Wake schedules the task to be polled again. Safe from any goroutine.
func (w Waker) Wake() {
	if w.raw != nil {
		w.raw.Wake()
	}
}

// Clone returns a Waker for the same task, through the executor's RawWaker.
func (w Waker) Clone() Waker {
	if w.raw == nil {
		return Waker{}
	}
	return Waker{w.raw.Clone()}
}

// Raw returns the executor's RawWaker, or nil.
func (w Waker) Raw() RawWaker { return w.raw }

// Executor runs futures. Implementations are safe for concurrent use.
type Executor interface {
	// Spawn queues f as a new task (SPAWN) and returns its Handle. It
	// fails with ErrClosed after Close, and with ErrNilFuture for a nil f.
	// Kit implements Spawn, Wait and Close for an executor of your own.
	Spawn(f Future) (Handle, error)
	// Wait blocks until every task spawned so far is DONE. Called from
	// inside one of the executor's own tasks it returns ErrWaitInTask
	// instead of deadlocking.
	Wait() error
	// Close stops accepting new tasks, waits for the spawned ones, and stops
	// the workers. A second Close returns ErrClosed.
	Close() error
}

// Handle is the result of one spawned task. It is itself a Future, so a task
// can await another task's result; Join blocks for it from outside.
type Handle interface {
	Future
	// Join blocks until the task is DONE and returns its value, or the
	// error it failed with: a *PanicError if its future panicked, a
	// *FailedError (wrapping the error) if it returned a Failed value.
	Join() (any, error)
}

// Errors of bad use.
var (
	ErrClosed     = errors.New("executor: closed")
	ErrNilFuture  = errors.New("executor: nil future")
	ErrWaitInTask = errors.New("executor: waiting on the executor from inside one of its tasks would deadlock")
)

// PanicError is the error of a task whose future panicked: the panic value
// and the stack of the goroutine that polled it.
type PanicError struct {
	Task  int64
	Value any
	Stack []byte
}

// Recorder receives the events of an executor. Record is called from the
// executor's goroutines, concurrently; it must not block for long and must
// not call back into the executor.
type Recorder interface {
	Record(e traces.Event)
}

// BatchRecorder is a Recorder that also takes events in batches, packed
// (traces.Log is one). The built-in executors hand such a recorder their
// events in batches of a few hundred, which costs far less per event than a
// call per event: each worker fills its own batch without locks, and hands
// it over when it is full and when the worker runs out of work; Wait and
// Close collect the rest before they return. So the events of the tasks
// Wait waited for, up to their ends, are all in the recorder when it
// returns, not necessarily before. Under a Scheduler they go one by one, through Record, as they
// would to any Recorder.
//
// RecordPacked may be called from several goroutines at once. batch is
// valid only during the call; the recorder must copy what it keeps. Events
// with a Detail (panics) still come through Record.
type BatchRecorder interface {
	Recorder
	RecordPacked(batch []traces.Packed)
}

// Optional abilities, found by type assertion.

// Reporter is an executor that reports its events. SetRecorder must be called
// before the first Spawn; nil turns recording off (the default, which costs
// nothing).
type Reporter interface {
	SetRecorder(r Recorder)
}

// Controllable is an executor whose goroutines pass through a Scheduler at
// their yield points, so a test can control the interleaving. SetScheduler
// is called before the first Spawn.
type Controllable interface {
	SetScheduler(s Scheduler)
}

// Prioritized is an executor that takes a priority with each task; higher
// runs first.
type Prioritized interface {
	SpawnPriority(f Future, priority int) (Handle, error)
}

// Bounded is an executor that states its bounded-fairness figure: the most
// polls of other tasks between a task becoming ready and its poll, for n
// tasks, or -1 if it states none.
type Bounded interface {
	FairnessBound(n int) int
}

// Point names a yield point, for a Scheduler's log and choices. It is
// point.Point, defined in a package that imports nothing, so that the
// controlled runtime can name yield points without importing this package.
type Point = point.Point

// Yield points of the built-in executors.
const (
	PointNone  = point.None
	PointPush  = point.Push  // before a push onto a queue
	PointPop   = point.Pop   // before a pop from a queue
	PointSteal = point.Steal // before a steal
	PointWake  = point.Wake  // before a wake takes effect
	PointPark  = point.Park  // before a worker parks
	PointPoll  = point.Poll  // before a poll
	PointLock  = point.Lock  // before a lock is taken
	PointSpawn = point.Spawn // before a task is spawned
)

// Scheduler controls the goroutines of an executor for controlled
// interleavings: under it exactly one controlled goroutine runs at a time,
// and at each yield point the Scheduler chooses which runs next. A nil
// Scheduler means the Go runtime schedules, and costs one nil check per
// yield point.
type Scheduler interface {
	// Go starts fn on a new controlled goroutine.
	Go(fn func())
	// Yield is a yield point: the Scheduler may run another goroutine
	// before it returns.
	Yield(p Point)
	// Block yields and returns only once ready() is true. The Scheduler
	// calls ready only while no controlled goroutine runs, so ready may read
	// state that controlled goroutines share without locks. It is how
	// locks, condition variables and parking are built under control.
	Block(p Point, ready func() bool)
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("executor: task %d panicked: %v", e.Task, e.Value)
}

// Describer is an executor that says which policy of the model it follows,
// so that its recorded trace can be checked against that policy. The
// description becomes the trace's header.
type Describer interface {
	Describe() traces.Header
}
