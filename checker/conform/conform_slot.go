package conform

import (
	"slices"
	"strconv"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// The LIFO slot (config lifo-slot=1) is a one-task place next to a worker's
// local queue: a spawn or a wake on worker w goes into w's slot when it is
// empty, the slot is taken with source lifo, and thieves never see it. The
// model has no slot, so the checker keeps the slot's task in the model's
// local queue, always at the tail, and hides it from the rules that do not
// see it:
//   - a take from the slot sees the local queue as holding the slot's task
//     alone (POLL-LOCAL of it);
//   - every other take, by the owner or by a thief, sees the local queues
//     without their slots.
//
// The model's local capacity is local-cap + 1, so that a queue of local-cap
// tasks plus the slot's task overflows exactly when the executor's does. The
// executor's bound on takes from the slot in a row (lifo-max) is not
// checked: it orders the slot against the local queue, which the premises
// above do not constrain.

// slotPush notes a push of e's task onto worker d's local queue by a spawn
// or a wake: into the slot if it is empty, else behind the slot's task.
func (c *Conformance) slotPush(e *traces.Event, d int) {
	if !c.slotOn || d < 0 || c.placed(int(e.Task), d) != traces.LocalQueue(d) {
		return
	}
	cw := &c.workers[d]
	if c.slotIn(d) == 0 {
		cw.slot = int32(e.Task)
		return
	}
	c.keepSlotLast(d)
}

// slotRequeue keeps the slot's task last after TASK-SUSPEND re-queued t on
// w's local queue (a re-queue never goes into the slot), and applies the
// overflow at the executor's capacity when the slot is empty.
func (c *Conformance) slotRequeue(w, t int) {
	if !c.slotOn || c.placed(t, w) != traces.LocalQueue(w) {
		return
	}
	if c.slotIn(w) != 0 {
		c.keepSlotLast(w)
		return
	}
	if q := c.s.Local[w]; len(q) > c.capacity() {
		// Without its slot's task, w's local queue was full: the re-queue
		// overflows to the global queue.
		c.s.Local[w] = q[:len(q)-1]
		c.s.Global = append(c.s.Global, int32(t))
		c.syncGlobal(model.Step{})
		c.liveOf(&c.tasks[t-1]).requeue = traces.QueueGlobal
	}
}

// keepSlotLast swaps the last two tasks of w's local queue: the one just
// pushed behind the slot's task goes before it.
func (c *Conformance) keepSlotLast(w int) {
	q := c.s.Local[w]
	if n := len(q); n >= 2 && q[n-2] == c.workers[w].slot {
		q[n-2], q[n-1] = q[n-1], q[n-2]
	}
}

// slotOf returns the task in w's LIFO slot, which the checker keeps at the
// tail of the model's local queue. If a step event moved it (a model step
// knows nothing of slots), the slot is taken to be empty.
func (c *Conformance) slotOf(w int) int32 {
	t := c.workers[w].slot
	if q := c.s.Local[w]; t != 0 && (len(q) == 0 || q[len(q)-1] != t) {
		c.workers[w].slot = 0
		return 0
	}
	return t
}

// slotIn is slotOf for the moment just after a push onto w's local queue,
// when the slot's task may stand second to last.
func (c *Conformance) slotIn(w int) int32 {
	t := c.workers[w].slot
	if t != 0 && !slices.Contains(c.s.Local[w], t) {
		c.workers[w].slot = 0 // moved by a step event, which knows nothing of slots
		return 0
	}
	return t
}

// takeWithSlot applies a take when slots are on.
func (c *Conformance) takeWithSlot(st model.Step, e *traces.Event) error {
	s := c.s
	w := st.Worker
	if e.Source == traces.SourceLIFO {
		slot := c.slotOf(w)
		if slot == 0 || int(slot) != st.Task {
			return &model.PremiseError{Step: st, Premise: "t in the LIFO slot of w", Reason: slotReason(w, slot)}
		}
		q := s.Local[w]
		s.Local[w] = q[len(q)-1:]
		err := c.apply(st, e.Seq)
		if err != nil {
			s.Local[w] = q // the rule left the state as it was
			return err
		}
		s.Local[w] = q[:len(q)-1]
		c.workers[w].slot = 0
		return nil
	}
	hide := func(v int) int32 {
		if v < 0 || v >= len(c.workers) {
			return 0
		}
		t := c.slotOf(v)
		if t != 0 {
			s.Local[v] = s.Local[v][:len(s.Local[v])-1]
		}
		return t
	}
	show := func(v int, t int32) {
		if t != 0 {
			s.Local[v] = append(s.Local[v], t)
		}
	}
	own := hide(w)
	var victim int32
	if st.Rule == model.WORKER_STEAL && st.Victim != w {
		victim = hide(st.Victim)
	}
	err := c.apply(st, e.Seq)
	show(w, own)
	if victim != 0 {
		show(st.Victim, victim)
	}
	return err
}

func slotReason(w int, slot int32) string {
	if slot == 0 {
		return "w" + strconv.Itoa(w) + "'s LIFO slot is empty"
	}
	return "w" + strconv.Itoa(w) + "'s LIFO slot holds t" + strconv.Itoa(int(slot))
}
