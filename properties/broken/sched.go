package broken

import (
	"runtime"

	"github.com/execspec/execspec/executor"
)

// ctl is the controlled-interleaving hook of a base executor. With a
// Scheduler set (executor.Controllable), every goroutine of the executor is
// started through it, every yield point is a Scheduler.Yield and every wait
// is a Scheduler.Block, so that the Scheduler runs one goroutine at a time
// and chooses at each point. Without one, the executor runs on the Go
// scheduler and only the yields that real executors have (an idle worker
// before it parks, a thief between reading and claiming) remain, as
// runtime.Gosched.
type ctl struct {
	sched executor.Scheduler
	recorder
}

// SetScheduler implements executor.Controllable. Call it before the first
// Spawn.
func (c *ctl) SetScheduler(s executor.Scheduler) { c.sched = s }

func (c *ctl) scheduler() executor.Scheduler { return c.sched }

// yield is a yield point. Uncontrolled, only the park and steal points
// yield.
func (c *ctl) yield(p executor.Point) {
	if c.sched != nil {
		c.sched.Yield(p)
		return
	}
	if p == executor.PointPark || p == executor.PointSteal {
		runtime.Gosched()
	}
}

// goWorker starts fn on a new goroutine, a controlled one under a
// Scheduler.
func (c *ctl) goWorker(fn func()) {
	if c.sched != nil {
		c.sched.Go(fn)
		return
	}
	go fn()
}
