// Package kitfifo is the run queue of the small test executors written on
// executor.Kit (properties/broken's kit FIFO, the properties tests' time
// slices and work conservation): one FIFO queue of tasks under one lock,
// and the loop of a worker that polls each task it takes once.
//
// An executor on a Kit brings its queue and its loop (see executor.Kit);
// these executors differ from each other only around them (a wrapped
// future, a time slice of polls, a push that does not wake a parked
// worker), so they share this one. examples/customexec shows the same
// queue written out, as a user of executor.Kit writes it.
//
// Example, a correct FIFO executor with two workers:
//
//	q := &kitfifo.Queue{}
//	q.Kit = executor.NewKit(executor.KitConfig{Workers: 2, Schedule: q.Push, Work: q.Work})
//	h, err := q.Kit.Spawn(f)
package kitfifo

import (
	"sync"

	"github.com/execspec/execspec/executor"
)

// Queue is a FIFO queue of a Kit's tasks. Set Kit, whose Schedule is Push
// (or a function that calls Put), before the first Spawn.
//
// The zero Queue is empty and usable once Kit is set. Safe for concurrent
// use. Cost: one short critical section per push and per pop.
type Queue struct {
	Kit *executor.Kit
	// Marked makes Put and Pop mark the push and the take for the Kit's
	// recorder (Kit.Pushed, Kit.Took), inside their critical sections, as
	// an executor that reports its events must. An executor that polls
	// with Kit.PollOnce leaves it unset: its tasks stay RUNNING between
	// polls, and a take would make them RUNNING again.
	Marked bool

	mu sync.Mutex
	q  []*executor.JoinHandle
}

// Push puts t at the tail and wakes a parked worker (Kit.Notify): the
// Kit's Schedule. Any goroutine may call it.
func (q *Queue) Push(t *executor.JoinHandle) {
	q.Put(t)
	q.Kit.Notify()
}

// Put is Push without the wake: the caller notifies, or not.
func (q *Queue) Put(t *executor.JoinHandle) {
	q.mu.Lock()
	q.q = append(q.q, t)
	if q.Marked {
		q.Kit.Pushed(t)
	}
	q.mu.Unlock()
}

// Pop takes the task at the head for worker w, or returns nil if the queue
// is empty. Only worker w calls it.
func (q *Queue) Pop(w int) (t *executor.JoinHandle) {
	q.mu.Lock()
	if len(q.q) > 0 {
		t, q.q = q.q[0], q.q[1:]
		if q.Marked {
			q.Kit.Took(t, w)
		}
	}
	q.mu.Unlock()
	return t
}

// HasWork reports whether a task is queued: the check of Kit.Park.
func (q *Queue) HasWork() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.q) > 0
}

// Work is the loop of worker w (KitConfig.Work): Kit.Loop on this queue.
func (q *Queue) Work(w int) { q.Kit.Loop(w, q.Pop, q.HasWork) }
