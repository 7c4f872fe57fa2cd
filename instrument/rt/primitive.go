package rt

// Building a controlled primitive. A replacement of a blocking type of
// the standard library (instrument/rt/rtstd's Mutex, WaitGroup, Cond...)
// is built on the few names below, and on nothing else of the
// scheduler's inside:
//
//	h, ok := rt.Holding()
//	if !ok {
//		m.mu.Lock() // not the goroutine holding control: what Go does
//		return
//	}
//	gen := h.Run()
//	h.Block(rt.OpLock, "Mutex.Lock", func() bool { return m.locked != gen })
//	m.locked = gen
//
// A primitive's controlled state belongs to one run (Holder.Run): a value
// left locked by a stopped run is free in the next. The operation code of
// a yield point enters the run's checksum, so a primitive keeps its codes
// for schedules to replay.

// Op is the operation code of a yield point.
type Op uint64

// The operation codes of the sync primitives.
const (
	OpLock    = Op(opLock)
	OpUnlock  = Op(opUnlock)
	OpRLock   = Op(opRLock)
	OpRUnlock = Op(opRUnlock)
	OpWait    = Op(opWait)
	OpSignal  = Op(opSignal)
	OpOnce    = Op(opOnce)
)

// Holder is the controlled goroutine holding control, as a primitive
// sees it. Its methods may be called only by that goroutine, while it
// holds control (not stored for later).
type Holder struct {
	r *run
	g *gor
}

// Holding returns the caller as the goroutine holding control, or false
// if it is not (outside a run, an uncontrolled goroutine): then a
// primitive does what Go does.
func Holding() (Holder, bool) {
	r, g := current()
	return Holder{r, g}, g != nil
}

// Run is the run's number, never 0: controlled state stamped with
// another number is left over from an earlier run.
func (h Holder) Run() uint64 { return h.r.gen }

// Yield is a yield point: another goroutine may run before it returns.
func (h Holder) Yield(op Op) { h.r.yield(h.g, uint64(op)) }

// Block is a yield point that returns once ready() holds. ready must be
// side-effect free (the scheduler calls it, while every other goroutine
// is settled, to decide who may run); what names the wait in the report
// of a hang ("Mutex.Lock").
func (h Holder) Block(op Op, what string, ready func() bool) {
	h.r.block(h.g, uint64(op), wait{op: what, ready: ready})
}

// Flag returns the goroutine's wake flag, set to false: a goroutine that
// is woken by another (a Cond.Wait) hands it to the waker, then waits
// with BlockFlag until the waker sets it. It saves a closure at each
// wait; a goroutine waits on one flag at a time.
func (h Holder) Flag() *bool {
	h.g.condWoken = false
	return &h.g.condWoken
}

// BlockFlag is Block until *flag (Flag) is true.
func (h Holder) BlockFlag(op Op, what string, flag *bool) {
	h.r.block(h.g, uint64(op), wait{op: what, woken: flag})
}

// Quietly runs f with the standard library's sync overlay off
// (stdsync.go): a primitive's own use of package sync is no yield point.
func (h Holder) Quietly(f func()) { h.r.quietly(f) }
