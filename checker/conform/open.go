package conform

import (
	"github.com/execspec/execspec/checker/internal/frame"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// What a caller that follows the open model along a trace may read of it:
// spec coverage (package cover) projects each conforming event onto the
// closed model's state space, and needs the open state, the header's
// policy and the per-task figures the conformance checker keeps.

// Policy is what a trace header declares about its executor, as the model
// reads it: the model's configuration of the policy (workers and the
// policy's parameters, no workload), and two features the conformance
// checker follows beyond the closed model's policies.
type Policy struct {
	Config   model.Config
	Priority bool // the priority policy: the checker keeps its own priority order (Config.Policy is not Priority)
	LIFOSlot bool // lifo-slot=1: the executor keeps a LIFO slot per worker
}

// HeaderPolicy returns the policy the header h declares, or why the header
// cannot be checked (an unknown policy or config key, a value out of range).
func HeaderPolicy(h traces.Header) (Policy, error) {
	cfg, c, err := confConfig(h)
	if err != nil {
		return Policy{Config: cfg}, err
	}
	return Policy{Config: cfg, Priority: c.priority, LIFOSlot: c.slotOn}, nil
}

// Describe says what an event claims, in the words of its rule, as a
// violation's message does: "WORKER-STEAL by worker 1 of task 3 from
// worker 0".
func Describe(e traces.Event) string { return frame.Describe(&e, 0) }

// TakeRule returns the rule a take from src reports: GLOBAL-STEAL,
// WORKER-STEAL, or POLL-LOCAL (a take from the local queue or the LIFO
// slot, and a take that names no source).
func TakeRule(src traces.Source) model.Rule { return frame.TakeRule(src) }

// State returns the open model's state after the events Step accepted. It
// is the checker's own: the caller must not change it, and it changes
// with the next Step.
func (c *Conformance) State() *model.State {
	c.globalInOrder()
	return c.s
}

// SkipInvariants stops the checks of the model's invariants after each
// event, for a caller that knows every state the trace reaches is a state
// the model checker has checked (spec coverage). Finish still checks them
// once on the final state.
func (c *Conformance) SkipInvariants() { c.invEvery = 1 << 30 }

// SpuriousPolls reports whether the trace's header allows spurious polls
// (format v1.1, config spurious-polls: 1): polls of a task that no wake
// since its last Pending asked for.
func (c *Conformance) SpuriousPolls() bool { return c.v11 != nil && c.v11.spurious }

// Age returns how many takes of other tasks passed task t over since it was
// queued, up to the header's aging (the priority policy of a v1.1 trace);
// ok is false when the checker counts no ages (a v1.0 trace).
func (c *Conformance) Age(t int) (age uint8, ok bool) {
	if c.v11 == nil {
		return 0, false
	}
	if c.gq != nil && c.gq.Prioritized() {
		age = uint8(c.gq.Passed(int32(t), c.v11.aging))
	}
	return age, true
}
