package broken

import (
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// How the bases record (executor.Reporter).
//
// One record lock per executor, rl, is held around every operation that
// makes an event: a push (spawn, wake, re-queue), a take, and each change of
// a task's state word with the event it makes. The event's Seq is drawn
// under it, so the trace's order is the order in which the operations took
// effect. Under a Scheduler rl is a controlled lock (a Block on "free"), so
// the yield points inside it stay yield points. A bug is recorded as what
// the code did: a second push of a QUEUED task as a wake that schedules it,
// a wake through a waker that wakes nothing as dropped, two takes of one
// task as two takes.
//
// Without a Recorder the bases still take rl (their behaviour, and so their
// bugs, do not change with recording) but make no events.

// recorder is the recording half of ctl.
type recorder struct {
	rec   executor.Recorder
	seq   uint64     // under rl
	rmu   sync.Mutex // rl, uncontrolled
	rheld bool       // rl, controlled
	gids  []atomic.Int64
}

// SetRecorder implements executor.Reporter. Call it before the first Spawn.
func (c *ctl) SetRecorder(r executor.Recorder) { c.rec = r }

func (c *ctl) lockRec() {
	if s := c.sched; s != nil {
		s.Block(executor.PointLock, func() bool { return !c.rheld })
		c.rheld = true
		return
	}
	c.rmu.Lock()
}

func (c *ctl) unlockRec() {
	if c.sched != nil {
		c.rheld = false
		return
	}
	c.rmu.Unlock()
}

// emit records e; the caller holds rl.
func (c *ctl) emit(e traces.Event) {
	if c.rec != nil {
		c.rec.Record(numbered(e, &c.seq))
	}
}

// numbered gives e the sequence number after *seq, and a victim only when
// it is a steal, as the trace format wants; the caller serializes the
// events of its executor.
func numbered(e traces.Event, seq *uint64) traces.Event {
	*seq++
	e.Seq = *seq
	if e.Source != traces.SourceSteal {
		e.Victim = -1
	}
	return e
}

// initWorkers makes room for n workers' goroutine ids.
func (c *ctl) initWorkers(n int) { c.gids = make([]atomic.Int64, n) }

// enter records that worker w runs on this goroutine.
func (c *ctl) enter(w int) {
	if c.rec != nil {
		c.gids[w].Store(goid())
	}
}

// self is the worker running on this goroutine, -1 outside the workers.
// Only when recording (it costs a stack read).
func (c *ctl) self() int32 {
	if c.rec == nil {
		return -1
	}
	g := goid()
	for w := range c.gids {
		if c.gids[w].Load() == g {
			return int32(w)
		}
	}
	return -1
}

// took records worker w's take of t from src (victim for a steal) and the
// start of its poll: t is RUNNING from here. The caller holds rl.
func (c *ctl) took(t *task, w int, src traces.Source, victim int) {
	t.state.Store(running)
	c.emit(traces.Event{Kind: traces.KindTake, Task: t.id, Worker: int32(w), Source: src, Victim: int32(victim)})
	c.emit(traces.Event{Kind: traces.KindPollBegin, Task: t.id, Worker: int32(w)})
}

// Describe implements executor.Describer: the single-queue base follows the
// model's "fifo" policy, or "priority" with aging.
func (ex *queueExec) Describe() traces.Header {
	h := traces.Header{Format: traces.Format, Version: traces.Version, Executor: "broken-queue", Workers: ex.n, Policy: "fifo"}
	if ex.prio {
		h.Policy, h.Config = "priority", map[string]int{"aging": 1}
	}
	return h
}
