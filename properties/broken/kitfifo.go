package broken

import (
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/internal/kitfifo"
)

// kitFIFO is a correct FIFO executor on executor.Kit, W workers, for the
// broken executors that differ from it in what they do around a poll: wrap,
// when set, replaces each spawned future by another.
type kitFIFO struct {
	q    kitfifo.Queue
	wrap func(executor.Future) executor.Future
}

func newKitFIFO(workers int, wrap func(executor.Future) executor.Future) *kitFIFO {
	e := &kitFIFO{wrap: wrap}
	e.q.Kit = executor.NewKit(executor.KitConfig{Workers: workers, Schedule: e.q.Push, Work: e.q.Work})
	return e
}

func (e *kitFIFO) Spawn(f executor.Future) (executor.Handle, error) {
	if f != nil && e.wrap != nil {
		f = e.wrap(f)
	}
	return e.q.Kit.Spawn(f)
}

// SetScheduler implements executor.Controllable, as the catalogue's other
// executors do: by default the suite runs its cases under a controller,
// so a hang is a deadlock the scheduler finds, not a pause that a loaded
// machine makes look like one.
func (e *kitFIFO) SetScheduler(s executor.Scheduler) { e.q.Kit.SetScheduler(s) }

func (e *kitFIFO) Wait() error  { return e.q.Kit.Wait() }
func (e *kitFIFO) Close() error { return e.q.Kit.Close() }
