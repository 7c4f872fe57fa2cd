package rt

import (
	"sync/atomic"
	"unsafe"
)

// Phases that only time can end. The external phase waits, in one real
// select, for the first of the blocked goroutines' operations to
// complete. Where the runtime's timers are read, a receive from a
// timer's channel is not waited on (its timer's time is known), and in
// most of a pool's phases what is left — a worker's task channel, a
// pool's context — can only complete if some goroutine runs meanwhile.
// Nothing can run while every other goroutine of the bubble is durably
// blocked until a timer of the bubble fires: the runtime's heap of the
// bubble's timers holds every timer that can wake one (a sleep, an
// AfterFunc, a context's deadline, a timer's channel that a goroutine
// is blocked on; a timer's channel nobody waits on fires when it is
// received from). If none is due before the earliest timer that the
// phase knows of, nothing can complete the other operations before it
// fires: the phase waits for that instant alone, and the sweep at the
// end of the phase completes what can complete then, as the real select
// would have (it chooses among those too). That spares the select's
// cases, the locking of every channel and a waiter on each: over 98 % of
// TestAnts's phases end so.
//
// The bubble is the runtime's (runtime/synctest.go), read, never
// written, through the channels' descriptors (hchan.bubble): its clock
// must read as time.Now does, or nothing is concluded.

// synctestBubble mirrors the head of the runtime's synctestBubble (Go
// 1.26, 64-bit: timersReadable).
type synctestBubble struct {
	mu     uintptr
	timers struct {
		mu                           uintptr
		heap                         [3]uintptr // []timerWhen
		len                          uint32
		zombies                      int32
		raceCtx                      uintptr
		minWhenHeap, minWhenModified int64 // atomic; 0: none
	}
	id                 uint64
	now                int64
	root, waiter, main unsafe.Pointer
	waiting, done      bool
	// total goroutines, those not durably blocked, other activity.
	total, running, active int
}

// bubbleOf returns the bubble of the channel h, or nil if it has none
// or the runtime's structures cannot be read.
func bubbleOf(h *hchan) *synctestBubble {
	if !timersReadable || h == nil {
		return nil
	}
	return h.bubble
}

// onlyTime reports whether nothing but a timer due after until can wake
// a goroutine of b: the caller is the only goroutine of b that is not
// durably blocked, and no timer of b's heap is due at or before until.
// now is the bubble's clock as the caller read it.
func (b *synctestBubble) onlyTime(now, until int64) bool {
	if b == nil || b.now != now || b.running != 1 || b.active != 0 {
		return false
	}
	// A zombie (a stopped timer not yet removed) may hold minWhenHeap
	// earlier: the phase then takes the select.
	m, mod := atomic.LoadInt64(&b.timers.minWhenHeap), atomic.LoadInt64(&b.timers.minWhenModified)
	return (m == 0 || m > until) && (mod == 0 || mod > until)
}

// onlyTimePhases counts the external phases that waited for a timer
// alone (tests).
var onlyTimePhases atomic.Int64
