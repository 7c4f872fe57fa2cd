package rt

import (
	"sync/atomic"
	"time"
	"unsafe"
)

// The standard library's sync, when the build overlays it (instrument's
// Config.StdSync): sync.Mutex, RWMutex, WaitGroup, Once and Cond, called
// by the goroutine holding control, pass the yield points below, and a
// blocking call waits in the scheduler until the value's real state lets
// it complete at once; called by any other goroutine, or outside a run,
// they are Go's. The overlay holds no state of its own: controlled and
// uncontrolled goroutines share the real values.

// stdTable is sync's execspecTable (the same layout; see
// instrument/stdsync.go).
type stdTable struct {
	controlled func() bool
	block      func(op int, what string, ready func() bool)
	spawn      func(f func())
}

// stdOps maps the overlay's operation numbers to the scheduler's.
var stdOps = [...]uint64{opLock, opUnlock, opRLock, opRUnlock, opWait, opSignal, opOnce}

// stdHooks is sync's execspecHooks when the overlay is linked (sync
// pushes it), a variable of this package otherwise.
//
//go:linkname stdHooks sync.execspecHooks
var stdHooks unsafe.Pointer

//go:linkname stdOverlaid sync.execspecOverlaid
var stdOverlaid bool

func init() {
	atomic.StorePointer(&stdHooks, unsafe.Pointer(&stdTable{controlled: stdControlled, block: stdBlock, spawn: Go}))
}

// StdSync reports whether the standard library's sync linked into this
// program is the overlay that puts it under control.
func StdSync() bool { return stdOverlaid }

// stdControlled: the caller holds control, outside the scheduler's own
// code (run.quiet), in a run that is not being stopped.
func stdControlled() bool {
	r, g := current()
	return g != nil && r.quiet == 0 && !r.aborting
}

func stdBlock(op int, what string, ready func() bool) {
	r, g := current()
	if g == nil {
		return
	}
	if ready == nil {
		r.yield(g, stdOps[op])
		return
	}
	r.block(g, stdOps[op], wait{op: what, ready: ready, polled: true})
}

// quietly runs f, on the goroutine holding control, with the overlay's
// hooks off: the runtime's own use of package sync is no yield point.
func (r *run) quietly(f func()) {
	r.quiet++
	defer func() { r.quiet-- }()
	f()
}

// stdWaits reports whether a controlled goroutine waits on the standard
// library's sync or spins on an atomic (a polled wait; and, with ready,
// whether one can now go on): in the external phase uncontrolled
// goroutines and timers may release it.
func (r *run) stdWaits(ready bool) bool {
	for _, g := range r.alive {
		if g.state == gBlocked && g.w.polled && (!ready || r.isReady(&g.w)) {
			return true
		}
	}
	return false
}

// stdPoll wakes the external phase while a controlled goroutine waits on
// the standard library's sync: an uncontrolled goroutine (a timer's
// callback, one that sleeps while it holds a lock) may release it at any
// instant, and nothing else says when. It looks after 1 ms of virtual
// time, then after twice as long each time, so that time passes at most
// about twice as far as the release needed rather than to the horizon.
type stdPoll struct {
	t *time.Timer
	d time.Duration
}

func (r *run) newStdPoll() *stdPoll {
	if !r.stdWaits(false) {
		return &stdPoll{}
	}
	return &stdPoll{t: time.NewTimer(time.Millisecond), d: time.Millisecond}
}

// c is the channel to wait on (nil: none).
func (p *stdPoll) c() <-chan time.Time {
	if p.t == nil {
		return nil
	}
	return p.t.C
}

// again looks again after twice the last delay.
func (p *stdPoll) again() {
	if p.t != nil {
		p.d *= 2
		p.t.Reset(p.d)
	}
}

func (p *stdPoll) stop() {
	if p.t != nil {
		p.t.Stop()
	}
}
