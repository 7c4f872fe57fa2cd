package executor

import (
	"github.com/execspec/execspec/executor/point"
	"github.com/execspec/execspec/traces"
)

// PointRegister is the yield point after a poll registered its waker
// (Context.Register), before the poll returns Pending.
const PointRegister = point.Register

// Registrar is a RawWaker that records a poll's registration of its waker:
// Context.Register calls Register with the polling worker. An executor
// that reports events records a register event (traces.KindRegister) there,
// and, under a Scheduler, yields (PointRegister). The built-in executors'
// tasks are Registrars.
type Registrar interface {
	Register(worker int)
}

// Register implements Registrar: it records POLL-PENDING for t on worker w, and yields: under a
// Scheduler another goroutine (a waker) may run between the registration
// and the poll's Pending return. The register event draws its Seq before
// the future hands the waker anywhere, so every wake of this registration
// comes after it in the trace.
func (t *task) Register(w int) {
	b := t.owner.joinCtl()
	if w < 0 || w >= len(b.wk) {
		return // not inside a poll of this executor
	}
	if b.rec != nil {
		b.emit(w, evPoll(traces.KindRegister, b.tick(), t, w))
		b.publish(w)
		b.sync(w)
	}
	b.yield(PointRegister)
}
