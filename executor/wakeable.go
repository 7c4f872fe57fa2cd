package executor

import "github.com/execspec/execspec/traces"

// Wakeable is a wake-driven executor with several workers on one shared
// FIFO queue. Like FIFO, a task is polled only when spawned or woken; unlike
// it, several tasks run at once, one per worker. It follows the model's
// "fifo" policy with W workers.
//
// Create it with NewWakeable; the zero Wakeable is not usable. Safe for
// concurrent use. Cost per task: one allocation; the one queue lock is
// shared by all workers, which is what limits it as workers are added.
type Wakeable struct {
	shared
}

// NewWakeable returns a Wakeable executor with the given number of workers
// (at least 1).
func NewWakeable(workers int) *Wakeable {
	e := &Wakeable{}
	e.initShared(workers, &fifoq{})
	return e
}

// Spawn implements Executor: SPAWN onto the queue's tail.
func (e *Wakeable) Spawn(f Future) (Handle, error) { return e.spawn(f, 0, nil, 0) }

// Describe implements Describer: policy "fifo", W workers.
func (e *Wakeable) Describe() traces.Header {
	return header("wakeable", e.nworkers, "fifo", nil)
}

// FairnessBound implements Bounded: a task that becomes ready waits at most
// for the n-1 other tasks, each ahead of it in the queue or already taken.
func (e *Wakeable) FairnessBound(n int) int { return max(n-1, 0) }
