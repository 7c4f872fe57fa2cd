package conform

import (
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// register maps a register event onto POLL-PENDING: the worker is RUNNING
// the task, whose poll has not registered yet. The poll-end pending that
// follows is then TASK-SUSPEND alone (pollEnd applies POLL-PENDING only to
// a poll that did not register), and a poll-end ready after it violates
// TASK-COMPLETE's premise "the future returns Ready": a future that
// registered returns Pending. A wake between the two finds the task
// RUNNING with its waker registered: NOTIFIED, the state a trace without
// register events never shows.
func (c *Conformance) register(idx int, e *traces.Event) error {
	st := model.Step{Rule: model.POLL_PENDING, Worker: int(e.Worker), Task: int(e.Task), Victim: -1, Dest: -1}
	if err := c.apply(st, e.Seq); err != nil {
		return c.failStep(idx, e, model.POLL_PENDING, err)
	}
	return nil
}
