package executor

import "github.com/execspec/execspec/traces"

// TimesliceConfig configures a Timeslice executor. The zero value works.
type TimesliceConfig struct {
	// Workers is the number of workers; 0 means 1.
	Workers int
	// Slice is how many times in a row a task woken during its own poll may
	// be polled again at once by the same worker before it goes to the back
	// of the queue; 0 means 2.
	Slice int
}

// Timeslice is a FIFO executor with time slices: a task NOTIFIED during its
// poll is polled again right away by the same worker, up to Slice times in
// a row, before being re-queued at the tail. It saves a queue round trip
// for tasks that wake themselves (yielding loops) at the cost of latency
// for the others, bounded by the slice. It follows the model's "timeslice"
// policy: in its trace, a re-poll within the slice is a PollEnd(Pending)
// followed by a PollBegin of the same task on the same worker, with no take
// between.
//
// Create it with NewTimeslice; the zero Timeslice is not usable. Safe for
// concurrent use. Cost per task: one allocation.
type Timeslice struct {
	shared
}

// NewTimeslice returns a Timeslice executor.
func NewTimeslice(c TimesliceConfig) *Timeslice {
	if c.Slice <= 0 {
		c.Slice = 2
	}
	e := &Timeslice{}
	e.initShared(c.Workers, &fifoq{})
	e.slice = c.Slice
	return e
}

// Spawn implements Executor: SPAWN onto the queue's tail.
func (e *Timeslice) Spawn(f Future) (Handle, error) { return e.spawn(f, 0, nil, 0) }

// Describe implements Describer: policy "timeslice", config "slice".
func (e *Timeslice) Describe() traces.Header {
	return header("timeslice", e.nworkers, "timeslice", map[string]int{"slice": e.slice})
}

// FairnessBound implements Bounded: each of the n-1 other tasks ahead of a
// ready task is polled at most 1+Slice times before it is re-queued behind
// it.
func (e *Timeslice) FairnessBound(n int) int { return max(n-1, 0) * (1 + e.slice) }
