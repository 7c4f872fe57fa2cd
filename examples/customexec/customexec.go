// Package customexec is a FIFO executor written on executor.Kit.
package customexec

import (
	"sync"

	"github.com/execspec/execspec/executor"
)

// Exec is a FIFO executor with a fixed number of workers.
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

func (e *Exec) push(t *executor.JoinHandle) {
	e.mu.Lock()
	e.q = append(e.q, t)
	e.mu.Unlock()
	e.kit.Notify()
}

func (e *Exec) pop() *executor.JoinHandle {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.q) == 0 {
		return nil
	}
	t := e.q[0]
	e.q = e.q[1:]
	return t
}

func (e *Exec) hasWork() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.q) > 0
}

func (e *Exec) work(w int) {
	for {
		if t := e.pop(); t != nil {
			e.kit.Run(t, w)
		} else if !e.kit.Park(w, e.hasWork) {
			return
		}
	}
}
