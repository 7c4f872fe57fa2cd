package rt

import (
	"runtime"
	"time"
	"unsafe"
)

// Go is the go statement: fn (a closure over the function value and the
// arguments, evaluated where the statement stands) runs on a new
// goroutine, controlled if the caller is. The statement is a yield point:
// the new goroutine may run first.
func Go(fn func()) {
	r, g := current()
	if g == nil {
		go fn()
		return
	}
	if r.aborting {
		panic(abortValue)
	}
	h := r.newG()
	h.daemon = g.daemon || r.initing
	h.harness = g.harness
	r.mix(tagGo)
	r.mix(uint64(g.id)<<32 | uint64(h.id))
	r.launch(h, fn)
	r.yield(g, opGo)
}

// AtExit registers f to be called when the calling controlled goroutine
// ends (its function returns, panics or calls runtime.Goexit), on that
// goroutine, before it hands control on; not when the run is stopped. A
// harness uses it to see a goroutine of the code under test end (the pool
// suite: a worker that ended idle). f must not block or call this
// package. It reports whether f was registered: outside a controlled
// goroutine it does nothing.
func AtExit(f func()) bool {
	_, g := current()
	if g == nil {
		return false
	}
	g.atExit = append(g.atExit, f)
	return true
}

// HousekeepingSteps returns how many steps the goroutines doing
// housekeeping (woken by a ticker: a pool's purge of idle workers;
// housekeeping.go) have made so far in the run in progress, or 0 outside
// one. A harness compares two readings to know whether housekeeping ran
// between two points of its own (the pool suite: whether a worker that
// ended after its task was stopped by the purge). Only the goroutine
// holding control may call it (an AtExit function included).
func HousekeepingSteps() int {
	r, g := current()
	if g == nil {
		return 0
	}
	return r.steps - r.progress
}

// Gosched is runtime.Gosched: a yield point.
func Gosched() {
	r, g := current()
	if g == nil {
		runtime.Gosched()
		return
	}
	r.yield(g, opYield)
}

// GoschedLoop is runtime.Gosched in a loop that only yields (the
// rewriter's goschedloop rule: the loop's body is the Gosched alone, and
// its condition and post statement touch nothing another goroutine can
// reach, as a spin lock's backoff `for i := 0; i < backoff; i++`): a
// yield point, after which it reports whether the loop may stop. Under
// control it may: each further iteration would only yield again, with
// nothing between the yields that another goroutine could see, and a
// run of such yield points allows exactly the interleavings of one (what
// others do in the later ones they can do in the first), so the choices
// they would ask for are not asked. Outside control, and in a run that
// replays a schedule of format version 1 (made before this rule), it
// does not: the loop runs as written.
func GoschedLoop() bool {
	r, g := current()
	if g == nil {
		runtime.Gosched()
		return false
	}
	r.yield(g, opYield)
	return !r.legacy
}

// Sleep is time.Sleep: a receive from a timer's channel, so that the
// other goroutines run while this one sleeps and the (virtual) clock
// advances only when every controlled goroutine is blocked. The timer
// is the goroutine's own, reused from sleep to sleep (a test's own
// sleep, rtstd.TestSleep, takes a timer of its own: it is the test's).
func Sleep(d time.Duration) {
	r, g := current()
	if g == nil {
		time.Sleep(d)
		return
	}
	if d <= 0 {
		r.yield(g, opSleep)
		return
	}
	// One timer per goroutine, made at its first sleep and reset at the
	// next ones: its value was received, so nothing is left in its
	// channel, and the channel is the goroutine's alone.
	if g.sleep == nil {
		g.sleep = time.NewTimer(d)
	} else {
		g.sleep.Reset(d)
	}
	Recv(g.sleep.C)
}

// Y is the result of Yield, so that a yield can stand in an expression
// before the operation it precedes: Then(Yield(), atomic.AddInt32(p, 1)).
type Y struct{}

// Yield is a yield point before an atomic operation.
func Yield() Y {
	r, g := current()
	if g != nil {
		r.yield(g, opAtomic)
	}
	return Y{}
}

// SpinCAS is the yield point before the compare-and-swap of a spin
// loop (the rewriter's spincas rule: `for !CAS(p, old, new) { body }`
// whose body nobody else can see, as a spin lock's backoff, and whose
// p, old and new are the same at every iteration): ready reports whether
// *p holds old, that is whether the CAS would succeed. Under control the
// goroutine waits until it does, so that the CAS it makes when it is
// chosen succeeds: its failed iterations changed nothing another
// goroutine could see (a failed CAS writes nothing, and the body touches
// only its own variables, dead after the loop), so the runs in which it
// spun allow the same interleavings as those in which it waited, without
// the steps and choices of the spinning. A wait nothing can end is then
// a deadlock the scheduler names instead of a spin to the step budget.
// Uncontrolled goroutines may store to *p, so the external phase looks
// at it again from time to time (a polled wait). Outside control, and
// in a run that replays a schedule of format version 1 (made before this
// rule), it is Yield: the loop runs as written.
func SpinCAS(ready func() bool) Y {
	r, g := current()
	if g == nil {
		return Y{}
	}
	if r.legacy {
		r.yield(g, opAtomic)
		return Y{}
	}
	r.block(g, opAtomic, wait{op: "spin on an atomic (CompareAndSwap)", ready: ready, polled: true})
	return Y{}
}

// Then returns v; its first argument, a Yield, is evaluated before v.
func Then[T any](_ Y, v T) T { return v }

// AfterFunc is time.AfterFunc: when the timer fires, f runs on a
// goroutine that the scheduler adopts, so that f's locks and channel
// operations are controlled like any other goroutine's. A callback that
// fires after the run ended, or outside any run, runs as Go runs it.
func AfterFunc(d time.Duration, f func()) *time.Timer {
	r, g := current()
	if g == nil {
		return time.AfterFunc(d, f)
	}
	// Counted until it fires (a stopped timer stays counted: the
	// scheduler then waits the horizon of virtual time, which costs
	// nothing, before it calls a hang).
	r.afterFuncs.Add(1)
	t := time.AfterFunc(d, func() {
		r.afterFuncs.Add(-1)
		if active.Load() != r || !r.adopt(f) {
			f()
		}
	})
	if r.cfg.EarlyTimers && timersReadable {
		// The callback's goroutine does not exist before the timer fires:
		// a stand-in, never ready, is the candidate that lets time pass
		// to it while others could run.
		// It takes a goroutine's number (strategies such as PCT index
		// their state by it), not counted by Goroutines.
		h := &gor{id: len(r.gs), state: gBlocked,
			w: wait{op: "time.AfterFunc", ready: func() bool { return false }, timed: func() bool { return afterFuncArmed(t) }}}
		r.gs = append(r.gs, h)
		r.afterTimers = append(r.afterTimers, h)
		r.tt.after = append(r.tt.after, t)
	}
	return t
}

// afterFuncArmed reports whether the AfterFunc timer t will fire: the
// runtime's timer follows a channel pointer and a bool in the
// *time.Timer (runtime/time.go's timeTimer, Go 1.26), its when at 24.
func afterFuncArmed(t *time.Timer) bool {
	return *(*int64)(unsafe.Add(unsafe.Pointer(t), 16+24)) > 0
}
