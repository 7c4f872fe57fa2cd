// Package customexec is a FIFO executor written on executor.Kit.
package customexec

import (
	"sync"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// Exec is a FIFO executor with a fixed number of workers (policy "fifo").
type Exec struct {
	kit *executor.Kit
	mu  sync.Mutex
	q   []*executor.JoinHandle
}

// New returns an executor with the given number of workers.
func New(workers int) *Exec {
	e := &Exec{}
	e.kit = executor.NewKit(executor.KitConfig{Workers: workers, Schedule: e.push, Work: e.work})
	return e
}

func (e *Exec) Spawn(f executor.Future) (executor.Handle, error) { return e.kit.Spawn(f) }
func (e *Exec) Wait() error                                      { return e.kit.Wait() }
func (e *Exec) Close() error                                     { return e.kit.Close() }
func (e *Exec) SetRecorder(r executor.Recorder)                  { e.kit.SetRecorder(r) }
func (e *Exec) SetScheduler(s executor.Scheduler)                { e.kit.SetScheduler(s) }
func (e *Exec) Describe() traces.Header                          { return e.kit.Header("customexec", "fifo") }

func (e *Exec) push(t *executor.JoinHandle) {
	e.mu.Lock()
	e.q = append(e.q, t)
	e.kit.Pushed(t) // inside the push's critical section: the event's place in the trace
	e.mu.Unlock()
	e.kit.Notify()
}

func (e *Exec) pop(w int) (t *executor.JoinHandle) {
	e.mu.Lock()
	if len(e.q) > 0 {
		t, e.q = e.q[0], e.q[1:]
		e.kit.Took(t, w) // likewise for the take
	}
	e.mu.Unlock()
	return t
}

func (e *Exec) hasWork() bool { e.mu.Lock(); defer e.mu.Unlock(); return len(e.q) > 0 }

func (e *Exec) work(w int) { e.kit.Loop(w, e.pop, e.hasWork) }
