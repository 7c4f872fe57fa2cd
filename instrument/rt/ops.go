package rt

import (
	"runtime"
	"time"
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
	r.mix(tagGo)
	r.mix(uint64(g.id)<<32 | uint64(h.id))
	go r.start(h, fn)
	r.yield(g, opGo)
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

// Sleep is time.Sleep: a receive from a timer's channel, so that the
// other goroutines run while this one sleeps and the (virtual) clock
// advances only when every controlled goroutine is blocked.
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
	Recv(time.After(d))
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

// Then returns v; its first argument, a Yield, is evaluated before v.
func Then[T any](_ Y, v T) T { return v }
