package rt

import (
	"github.com/execspec/execspec/instrument/rt/rtreport"
	"runtime/debug"
	"slices"
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
//
// One exception: a goroutine of a run's bubble that does not hold control
// (started by code that was not rewritten) and must wait for a Mutex or
// an RWMutex waits on a channel of the bubble (stdAwait), not in the
// runtime's semaphore, which synctest does not count as durably blocked:
// otherwise, while a controlled goroutine parked by the scheduler held
// the lock, settling (synctest.Wait) would never return.

// stdTable is sync's execspecTable (the same layout; see
// instrument/stdsync.go).
type stdTable struct {
	controlled func() bool
	block      func(op int, what string, ready func() bool)
	spawn      func(f func())
	await      func(what string, try func() bool) bool
	release    func()
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

// stdAssociate and stdInBubble are sync's execspecAssociate and
// execspecInBubble when the overlay is linked (nil otherwise): they tie a
// value to the calling goroutine's bubble and tell whether the caller is
// in the bubble a value is tied to.
//
//go:linkname stdAssociate sync.execspecAssociate
var stdAssociate func(p *uint64) bool

//go:linkname stdInBubble sync.execspecInBubble
var stdInBubble func(p *uint64) bool

func init() {
	atomic.StorePointer(&stdHooks, unsafe.Pointer(&stdTable{controlled: stdControlled, block: stdBlock, spawn: Go, await: stdAwait, release: stdRelease}))
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

// stdBubble is what the goroutines of one bubble that do not hold control
// share while they wait for the standard library's Mutex or RWMutex
// (stdAwait): the bell, a channel of the bubble that the next release
// closes (and replaces), and the waiters, for the report of a hang. A
// Bubble's runs share it, so a waiter may outlive a run.
type stdBubble struct {
	mark    *uint64 // tied to the bubble (stdAssociate)
	bell    atomic.Pointer[chan struct{}]
	waiters atomic.Pointer[stdWaiter] // a list, pushed to only
}

// stdWaiter is a goroutine in stdAwait: what it waits for, its stack.
type stdWaiter struct {
	what  string
	stack []byte
	done  atomic.Bool
	next  *stdWaiter
}

// stdCur is the bubble of the latest run (nil: none yet, or no overlay).
var stdCur atomic.Pointer[stdBubble]

// stdEnter runs on the root goroutine of a bubble before each run: the
// bubble's stdBubble is made on its first run.
func stdEnter() {
	if !stdOverlaid || stdAssociate == nil {
		return
	}
	if b := stdCur.Load(); b != nil && stdInBubble(b.mark) {
		return
	}
	b := &stdBubble{mark: new(uint64)}
	if !stdAssociate(b.mark) {
		return
	}
	bell := make(chan struct{}) // of the bubble: waiting on it is durable
	b.bell.Store(&bell)
	stdCur.Store(b)
}

// stdAwait is await of the overlay: the caller, which does not hold
// control, failed to take a lock. In the bubble of the runs it tries
// again after each release until try succeeds, and reports true; outside
// it, false (the caller waits as Go does). The bell is read before each
// try and a release closes it after the lock is let go, so no release
// between a failed try and the wait is missed.
func stdAwait(what string, try func() bool) bool {
	b := stdCur.Load()
	if b == nil || !stdInBubble(b.mark) {
		return false
	}
	w := &stdWaiter{what: what, stack: debug.Stack()}
	for {
		w.next = b.waiters.Load()
		if b.waiters.CompareAndSwap(w.next, w) {
			break
		}
	}
	defer w.done.Store(true)
	for {
		bell := b.bell.Load()
		if try() {
			return true
		}
		<-*bell
	}
}

// stdRelease is release of the overlay, after an Unlock or RUnlock while
// some goroutine waits in stdAwait: it rings the bell of the caller's
// bubble (a release outside it cannot: the waiter then waits for the
// next one inside).
func stdRelease() {
	b := stdCur.Load()
	if b == nil || !stdInBubble(b.mark) {
		return
	}
	bell := make(chan struct{})
	close(*b.bell.Swap(&bell))
}

// stdUncontrolled adds to a hang's report, when it is decided, the
// goroutines that do not hold control and wait in stdAwait.
func stdUncontrolled(h *HangError) {
	b := stdCur.Load()
	if b == nil || !stdInBubble(b.mark) {
		return
	}
	var ws []Blocked
	for w := b.waiters.Load(); w != nil; w = w.next {
		if !w.done.Load() {
			st := string(w.stack)
			ws = append(ws, Blocked{G: Uncontrolled, Op: w.what, Where: rtreport.Where(st), Stack: st})
		}
	}
	slices.Reverse(ws) // in the order they began to wait
	h.Blocked = append(h.Blocked, ws...)
}
