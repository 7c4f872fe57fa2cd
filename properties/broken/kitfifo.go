package broken

import (
	"sync"

	"github.com/execspec/execspec/executor"
)

// kitFIFO is a correct FIFO executor on executor.Kit, W workers, for the
// broken executors that differ from it in what they do around a poll: wrap,
// when set, replaces each spawned future by another.
type kitFIFO struct {
	kit  *executor.Kit
	wrap func(executor.Future) executor.Future
	mu   sync.Mutex
	q    []*executor.JoinHandle
}

func newKitFIFO(workers int, wrap func(executor.Future) executor.Future) *kitFIFO {
	e := &kitFIFO{wrap: wrap}
	e.kit = executor.NewKit(executor.KitConfig{Workers: workers, Schedule: e.push, Work: e.work})
	return e
}

func (e *kitFIFO) Spawn(f executor.Future) (executor.Handle, error) {
	if f != nil && e.wrap != nil {
		f = e.wrap(f)
	}
	return e.kit.Spawn(f)
}

func (e *kitFIFO) Wait() error  { return e.kit.Wait() }
func (e *kitFIFO) Close() error { return e.kit.Close() }

func (e *kitFIFO) push(t *executor.JoinHandle) {
	e.mu.Lock()
	e.q = append(e.q, t)
	e.mu.Unlock()
	e.kit.Notify()
}

func (e *kitFIFO) pop() *executor.JoinHandle {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.q) == 0 {
		return nil
	}
	t := e.q[0]
	e.q = e.q[1:]
	return t
}

func (e *kitFIFO) hasWork() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.q) > 0
}

func (e *kitFIFO) work(w int) {
	for {
		if t := e.pop(); t != nil {
			e.kit.Run(t, w)
		} else if !e.kit.Park(w, e.hasWork) {
			return
		}
	}
}
