package executor

import "github.com/execspec/execspec/traces"

// RetryConfig configures a Retry executor. The zero value works.
type RetryConfig struct {
	// Workers is the number of workers; 0 means 1.
	Workers int
	// Retries is the most times a failed task is run again; 0 means 2;
	// more than traces.MaxPackedExtra-1 means that (the largest future id
	// a packed event holds is the last attempt's).
	Retries int
}

// Retry is a FIFO executor that runs a failed task again, from a fresh
// future made by the task's factory, at most Retries times. A task fails
// when its future panics or returns a Failed value as Ready. A finished
// future is never polled again: each attempt polls a new one. In its trace,
// a retry is a PollEnd (result panic after a Panic event, or error for a
// Failed value) and a Requeue of the same task to the global queue. It follows
// the model's "retry" policy.
//
// Its traces are format v1.1: every poll-begin and poll-end carries the id
// of the future it drives (1 for the first attempt, then 2, 3, ...), so
// that `verify check` catches a re-poll of a finished future; Close
// records a stop.
//
// A task spawned with Spawn is retried when its future is Retryable (it
// makes the fresh futures); any other is run once. Create it with
// NewRetry; the zero Retry is not usable. Safe for concurrent use.
// Cost per task: one allocation, plus one future per attempt.
type Retry struct {
	shared
	retries int
}

// NewRetry returns a Retry executor.
func NewRetry(c RetryConfig) *Retry {
	if c.Retries <= 0 {
		c.Retries = 2
	}
	c.Retries = min(c.Retries, traces.MaxPackedExtra-1)
	e := &Retry{retries: c.Retries}
	e.initShared(c.Workers, &fifoq{})
	e.futures, e.stops = true, true
	return e
}

// Retryable is a future that can make a fresh future of the same
// computation, from its start: what a retrying executor runs again when the
// future failed (panicked, or returned Failed). A finished future is never
// polled again; each attempt polls a fresh one.
type Retryable interface {
	Future
	Fresh() Future
}

// Spawn implements Executor. A Retryable f is retried from f.Fresh() when
// it fails, at most Retries times; any other future runs once.
func (e *Retry) Spawn(f Future) (Handle, error) {
	if r, ok := f.(Retryable); ok && r != nil {
		return e.spawn(f, 0, r.Fresh, e.retries)
	}
	return e.spawn(f, 0, nil, 0)
}

// SpawnRetry spawns factory() as a task that, when it fails, is run again
// from a new factory() at most n times (n < 0, or more than the executor's
// Retries, means Retries). A nil factory is ErrNilFuture; a factory that
// panics or returns nil when retrying ends the task with its last error.
func (e *Retry) SpawnRetry(factory func() Future, n int) (Handle, error) {
	if factory == nil {
		return nil, ErrNilFuture
	}
	if n < 0 || n > e.retries {
		n = e.retries
	}
	f := factory()
	return e.spawn(f, 0, factory, n)
}

// Describe implements Describer: policy "retry", format v1.1, config
// "retries".
func (e *Retry) Describe() traces.Header {
	h := header("retry", e.nworkers, "retry", map[string]int{"retries": e.retries})
	h.Minor = 1
	return h
}

// FairnessBound implements Bounded: one FIFO queue; a retried task goes to
// the back.
func (e *Retry) FairnessBound(n int) int { return max(n-1, 0) }
