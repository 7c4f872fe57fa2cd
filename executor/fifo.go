package executor

import "github.com/execspec/execspec/traces"

// FIFO is the simplest executor: one queue, one worker, wake-driven. A task
// is polled only after it was spawned or woken (never re-polled on spec),
// and tasks are polled in the order they were queued. It follows the model's
// "fifo" policy with one worker.
//
// Create it with NewFIFO; the zero FIFO is not usable. Safe for concurrent
// use. Cost per task: one allocation (the task) and two short critical
// sections on the queue lock.
type FIFO struct {
	shared
}

// NewFIFO returns a FIFO executor. Its worker starts at the first Spawn.
func NewFIFO() *FIFO {
	e := &FIFO{}
	e.initShared(1, &fifoq{})
	return e
}

// Spawn implements Executor: SPAWN onto the queue's tail.
func (e *FIFO) Spawn(f Future) (Handle, error) { return e.spawn(f, 0, nil, 0) }

// Describe implements Describer: policy "fifo", one worker.
func (e *FIFO) Describe() traces.Header { return header("fifo", 1, "fifo", nil) }

// FairnessBound implements Bounded: with one FIFO queue, a task that becomes
// ready waits at most for the n-1 other tasks ahead of it.
func (e *FIFO) FairnessBound(n int) int { return max(n-1, 0) }
