package executor

import (
	"sync/atomic"

	"github.com/execspec/execspec/traces"
)

// Stats are the counts a Monitored executor keeps.
type Stats struct {
	Spawned   int64 // tasks accepted by Spawn
	Completed int64 // tasks whose future returned Ready with a value
	Failed    int64 // tasks whose future panicked or returned Failed
	Polls     int64 // calls of Poll
	Wakes     int64 // wakes of any outcome (needs an inner Reporter)
	LateWakes int64 // wakes that found their task DONE (needs an inner Reporter)
	Steals    int64 // takes from another worker's queue (needs an inner Reporter)
}

// Monitored wraps an executor and counts what it does. Spawned, Completed,
// Failed and Polls are counted by wrapping each future (one allocation per
// task); Wakes, LateWakes and Steals come from the inner executor's events,
// so they stay zero unless it is a Reporter. Monitored is itself a
// Reporter (events pass through to the recorder set on it), Controllable
// and a Describer when the inner executor is.
//
// Create it with NewMonitored. Safe for concurrent use; Stats may be called
// at any time (each count is read atomically, not all at one instant).
type Monitored struct {
	inner                                                  Executor
	rec                                                    Recorder
	spawned, completed, failed, polls, wakes, late, steals atomic.Int64
}

// NewMonitored wraps inner. If inner is a Reporter, Monitored installs
// itself as its recorder, so recording is on in inner from now on.
func NewMonitored(inner Executor) *Monitored {
	m := &Monitored{inner: inner}
	if r, ok := inner.(Reporter); ok {
		r.SetRecorder(m)
	}
	return m
}

// Inner returns the wrapped executor.
func (m *Monitored) Inner() Executor { return m.inner }

// Stats returns the counts so far.
func (m *Monitored) Stats() Stats {
	return Stats{
		Spawned: m.spawned.Load(), Completed: m.completed.Load(), Failed: m.failed.Load(),
		Polls: m.polls.Load(), Wakes: m.wakes.Load(), LateWakes: m.late.Load(), Steals: m.steals.Load(),
	}
}

type counted struct {
	f Future
	m *Monitored
}

func (c *counted) Poll(cx *Context) (v any, ready bool) {
	c.m.polls.Add(1)
	returned := false
	defer func() {
		if !returned { // panicking (or Goexit): let it go on, but count it
			c.m.failed.Add(1)
		}
	}()
	v, ready = c.f.Poll(cx)
	returned = true
	if ready {
		if _, ok := v.(Failed); ok {
			c.m.failed.Add(1)
		} else {
			c.m.completed.Add(1)
		}
	}
	return v, ready
}

// Spawn implements Executor, counting the task.
func (m *Monitored) Spawn(f Future) (Handle, error) {
	if ff, ok := f.(FutureFunc); f == nil || ok && ff == nil {
		return nil, ErrNilFuture
	}
	h, err := m.inner.Spawn(&counted{f: f, m: m})
	if err == nil {
		m.spawned.Add(1)
	}
	return h, err
}

// Wait implements Executor.
func (m *Monitored) Wait() error { return m.inner.Wait() }

// Close implements Executor.
func (m *Monitored) Close() error { return m.inner.Close() }

// Record implements Recorder: it counts the inner executor's wakes and
// steals and passes every event on.
func (m *Monitored) Record(e traces.Event) {
	switch e.Kind {
	case traces.KindWake:
		m.wakes.Add(1)
		if e.Outcome == traces.OutcomeLate {
			m.late.Add(1)
		}
	case traces.KindTake:
		if e.Source == traces.SourceSteal {
			m.steals.Add(1)
		}
	}
	if m.rec != nil {
		m.rec.Record(e)
	}
}

// SetRecorder implements Reporter: events of the inner executor are passed
// on to r.
func (m *Monitored) SetRecorder(r Recorder) { m.rec = r }

// SetScheduler implements Controllable if the inner executor is
// Controllable; otherwise it does nothing.
func (m *Monitored) SetScheduler(s Scheduler) {
	if c, ok := m.inner.(Controllable); ok {
		c.SetScheduler(s)
	}
}

// Describe implements Describer: the inner executor's description, named
// "monitored(inner)".
func (m *Monitored) Describe() traces.Header {
	if d, ok := m.inner.(Describer); ok {
		h := d.Describe()
		h.Executor = "monitored(" + h.Executor + ")"
		return h
	}
	return header("monitored", 0, "", nil)
}

// FairnessBound implements Bounded with the inner executor's bound, or -1.
func (m *Monitored) FairnessBound(n int) int {
	if b, ok := m.inner.(Bounded); ok {
		return b.FairnessBound(n)
	}
	return -1
}
