package conform

import (
	"fmt"
	"strings"

	"github.com/execspec/execspec/model"
)

// BoundedLanes returns the state as Lanes does, but with at most max tasks
// shown per queue and in the tasks line (the rest counted), so that it
// costs O(W + max) however many tasks the trace has: for stepping through
// long traces.
func (c *Conformance) BoundedLanes(max int) string {
	var b strings.Builder
	s := c.s
	b.WriteString("global ")
	if g := c.gq; g != nil && g.Dirty() {
		boundedQueue(&b, g.FirstN(max), len(s.Global), max) // in order, O(max)
	} else {
		boundedQueue(&b, s.Global, len(s.Global), max)
	}
	for w := range s.Cur {
		fmt.Fprintf(&b, "\nw%d %s  local ", w, s.Doing(w))
		boundedQueue(&b, s.Local[w], len(s.Local[w]), max)
		if t := c.workers[w].slot; t != 0 {
			fmt.Fprintf(&b, "  LIFO slot t%d", t)
		}
	}
	b.WriteString("\ntasks")
	shown := 0
	for i, st := range s.Task {
		if st == model.Idle {
			continue
		}
		if shown == max {
			fmt.Fprintf(&b, " … (%d tasks in all)", s.Spawned)
			break
		}
		shown++
		fmt.Fprintf(&b, " %s", c.TaskLane(i+1))
	}
	return b.String()
}

// boundedQueue writes the first max tasks of a queue of n tasks, whose
// first ones are q.
func boundedQueue(b *strings.Builder, q []int32, n, max int) {
	b.WriteByte('[')
	for i, t := range q {
		if i == max {
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(b, "t%d", t)
	}
	if n > max {
		fmt.Fprintf(b, " … +%d", n-max)
	}
	b.WriteByte(']')
}

// TaskLane returns task t's state as Lanes prints it, e.g.
// "t3:RUNNING/registered"; "" for a task not spawned or out of range.
func (c *Conformance) TaskLane(t int) string {
	s := c.s
	i := t - 1
	if i < 0 || i >= len(s.Task) || s.Task[i] == model.Idle {
		return ""
	}
	out := fmt.Sprintf("t%d:%s", t, s.Task[i])
	if s.Pend[i] > 0 {
		out += fmt.Sprintf("/pend=%d", s.Pend[i])
	}
	if s.Wakes[i] > 0 {
		out += fmt.Sprintf("/wakes=%d", s.Wakes[i])
	}
	if s.Polled[i] {
		out += "/registered"
	}
	if i < len(s.Age) && s.Age[i] > 0 {
		out += fmt.Sprintf("/age=%d", s.Age[i])
	}
	if i < len(s.Tries) && s.Tries[i] > 0 {
		out += fmt.Sprintf("/failed=%d", s.Tries[i])
	}
	return out
}
