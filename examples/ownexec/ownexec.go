// Package ownexec is a FIFO executor with a task type of its own, a future
// in a mutex, written on the Kit's pieces one by one: executor.WorkerIDs
// (ErrWaitInTask), executor.Tally (Wait and Close), executor.Promise (the
// Handle) and executor.PollTask (panics and Failed values).
package ownexec

import (
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/executor"
)

// Exec runs tasks from one FIFO queue on a fixed number of workers.
type Exec struct {
	ids   *executor.WorkerIDs
	tally executor.Tally
	mu    sync.Mutex
	cond  sync.Cond
	q     []*task
	stop  bool
	n     atomic.Int64
	wg    sync.WaitGroup
}

// task is a future in a mutex: queued, running and woken say where it is.
type task struct {
	e                      *Exec
	mu                     sync.Mutex
	fut                    executor.Future // nil once done
	id                     int64
	queued, running, woken bool
	p                      *executor.Promise
}

// New returns an executor with the given number of workers, running.
func New(workers int) *Exec {
	e := &Exec{ids: executor.NewWorkerIDs(workers)}
	e.tally.IDs, e.cond.L = e.ids, &e.mu
	for w := range max(workers, 1) {
		e.wg.Add(1)
		go e.ids.Run(w, func() { defer e.wg.Done(); e.work(w) })
	}
	return e
}

func (e *Exec) Spawn(f executor.Future) (executor.Handle, error) {
	if err := e.tally.Add(f); err != nil {
		return nil, err
	}
	t := &task{e: e, fut: f, id: e.n.Add(1), queued: true, p: executor.NewPromise(e.ids)}
	e.push(t)
	return t.p, nil
}

func (e *Exec) Wait() error { return e.tally.Wait() }

func (e *Exec) Close() error {
	if err := e.tally.Close(); err != nil {
		return err
	}
	e.mu.Lock()
	e.stop = true
	e.cond.Broadcast()
	e.mu.Unlock()
	e.wg.Wait()
	return nil
}

func (e *Exec) push(t *task) {
	e.mu.Lock()
	e.q = append(e.q, t)
	e.cond.Signal()
	e.mu.Unlock()
}

func (e *Exec) work(w int) {
	for {
		e.mu.Lock()
		for len(e.q) == 0 && !e.stop {
			e.cond.Wait()
		}
		if len(e.q) == 0 {
			e.mu.Unlock()
			return
		}
		t := e.q[0]
		e.q = e.q[1:]
		e.mu.Unlock()
		t.run(w)
	}
}

// run polls t once on worker w; a wake during the poll queues it again.
func (t *task) run(w int) {
	t.mu.Lock()
	t.queued, t.running = false, true
	t.mu.Unlock()
	v, done, err := executor.PollTask(t.fut, executor.NewContext(executor.NewWaker(t), w), t.id)
	t.mu.Lock()
	again := !done && t.woken
	t.running, t.woken, t.queued = false, false, again
	if done {
		t.fut = nil
	}
	t.mu.Unlock()
	if done {
		t.p.Complete(v, err)
		t.e.tally.Done()
	} else if again {
		t.e.push(t)
	}
}

// Wake implements executor.RawWaker: WAITING → queued, RUNNING → woken,
// queued or done → nothing.
func (t *task) Wake() {
	t.mu.Lock()
	push := t.fut != nil && !t.queued && !t.running
	t.queued = t.queued || push
	t.woken = t.woken || t.running
	t.mu.Unlock()
	if push {
		t.e.push(t)
	}
}

func (t *task) Clone() executor.RawWaker { return t }
