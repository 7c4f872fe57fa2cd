package conform

// The checker's side of the global queue's index (package globalq): kept
// in step with the model's global queue after every rule applied.

import (
	"github.com/execspec/execspec/model"
)

// syncGlobal keeps the index after the model applied st: a GLOBAL-STEAL
// took the head of its slice; any rule may have appended to it.
func (c *Conformance) syncGlobal(st model.Step) {
	g := c.gq
	if g == nil {
		return
	}
	if st.Rule == model.GLOBAL_STEAL && g.Has(int32(st.Task)) {
		g.Popped(int32(st.Task), c.s.Global)
	}
	g.Pushed(c.s.Global, c.pushRet)
}

// pushRet is the return tick of task t's last push (order intervals).
func (c *Conformance) pushRet(t int32) uint64 {
	if c.iv == nil {
		return 0
	}
	return c.iv.PushRet(t)
}

// globalInOrder puts the model's global queue in queue order before
// someone looks at it.
func (c *Conformance) globalInOrder() {
	if c.gq != nil {
		c.gq.InOrder(c.s.Global)
	}
}
