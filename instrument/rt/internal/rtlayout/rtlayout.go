// Package rtlayout reads what the controlled runtime (instrument/rt) must
// know of the Go runtime's private structures, without side effects: a
// channel's descriptor (whether an operation could complete: a
// non-blocking probe that receives would lose the value), the timer
// behind a timer's or a ticker's channel (when it fires, its period), and
// the synctest bubble the channel belongs to (its clock, the goroutines
// not durably blocked, its timers). It reads, never writes, and only
// while every goroutine that could change what it reads is blocked
// (settled). Each read is gated by the Go version its layout was checked
// on (TimersReadable: Go 1.26 on 64-bit platforms; the channel's head
// holds from Go 1.23), or found and checked at start (the period).
package rtlayout

import (
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"
)

// Chan mirrors the runtime's channel descriptor (runtime/chan.go, Go
// 1.23 to 1.26; bubble from 1.25).
type Chan struct {
	Qcount   uint
	Dataqsiz uint
	buf      unsafe.Pointer
	elemsize uint16
	Closed   uint32
	Timer    unsafe.Pointer // the timer of a timer's or ticker's channel
	elemtype unsafe.Pointer
	sendx    uint
	recvx    uint
	Recvq    WaitQ
	Sendq    WaitQ
	bubble   *Bubble // read only through Bubble
}

// RecvNow reports whether a receive from h may complete now by its
// descriptor: a value buffered, a blocked sender (which, if it was in a
// select, may have been woken by another case meanwhile), or closed.
func (h *Chan) RecvNow() bool { return h.Qcount > 0 || h.Closed != 0 || h.Sendq.First != nil }

// SendNow reports whether a send on h may complete now (or panic, if h
// is closed) by its descriptor: room in the buffer, a blocked receiver
// (as RecvNow's sender), or closed.
func (h *Chan) SendNow() bool { return h.Closed != 0 || h.Qcount < h.Dataqsiz || h.Recvq.First != nil }

// WaitQ is a channel's queue of blocked goroutines; First is nil when
// it is empty.
type WaitQ struct{ First, last unsafe.Pointer }

// ChanOf returns the descriptor of the channel stored at p (a pointer to
// a variable of any channel type), or nil for a nil channel.
func ChanOf(p unsafe.Pointer) *Chan { return *(**Chan)(p) }

// TimersReadable says whether the runtime's timer (runtime/time.go of Go
// 1.26: when, at offset 24 on 64-bit platforms) and the synctest bubble
// can be read.
var TimersReadable = strings.HasPrefix(runtime.Version(), "go1.26") && unsafe.Sizeof(uintptr(0)) == 8

// WhenOf returns where the runtime's timer t keeps when it fires next
// (TimersReadable only).
func WhenOf(t unsafe.Pointer) *int64 { return (*int64)(unsafe.Add(t, 24)) }

// When returns where the timer of h, a timer's or ticker's channel,
// keeps when it fires next, or nil if h is not one or timers cannot be
// read.
func (h *Chan) When() *int64 {
	if !TimersReadable || h == nil || h.Timer == nil {
		return nil
	}
	return WhenOf(h.Timer)
}

// TimerWhen returns when the timer of h fires next in the runtime's
// clock (the bubble's: time.Now().UnixNano()), or 0 if h is not a timer's
// channel, the timer is stopped or fired, or timers cannot be read.
func TimerWhen(h *Chan) int64 {
	if w := h.When(); w != nil {
		return *w
	}
	return 0
}

// TimerArmed reports whether h is the channel of a timer that will fire
// (a one-shot timer not yet fired or stopped, or a running ticker) and
// nothing is buffered yet.
func TimerArmed(h *Chan) bool {
	return TimerWhen(h) > 0 && h.Qcount == 0 && h.Closed == 0
}

// TimerOf returns the runtime's timer of t, a *time.Timer or (converted)
// a *time.Ticker: runtime/time.go's timeTimer is a channel pointer and a
// bool, then the timer (TimerOfReadable only).
func TimerOf(t *time.Timer) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(t), 16) }

// TimerOfReadable says whether TimerOf was checked: the timer behind a
// new timer's channel is where TimerOf says, and a when is read at the
// offset WhenOf reads (two timers an hour apart are an hour apart there).
var TimerOfReadable = TimersReadable && checkTimerOf()

func checkTimerOf() bool {
	a, b := time.NewTimer(time.Hour), time.NewTimer(2*time.Hour)
	defer a.Stop()
	defer b.Stop()
	ha, hb := ChanOf(unsafe.Pointer(&a.C)), ChanOf(unsafe.Pointer(&b.C))
	if ha == nil || hb == nil || ha.Timer != TimerOf(a) {
		return false
	}
	d := TimerWhen(hb) - TimerWhen(ha) - int64(time.Hour)
	return TimerWhen(ha) > 0 && d >= 0 && d < int64(time.Second)
}

// PeriodFound says whether IsTicker can tell a ticker's channel from a
// timer's: the offset of the runtime timer's period is found once, by
// creating two tickers with known periods and a timer and reading where
// they differ as expected.
var PeriodFound = periodOffset >= 0

var periodOffset = findPeriodOffset()

func findPeriodOffset() int {
	const p1, p2 = 987654321 * time.Nanosecond, 123456789 * time.Nanosecond
	a, b := time.NewTicker(p1), time.NewTicker(p2)
	c := time.NewTimer(time.Hour)
	defer a.Stop()
	defer b.Stop()
	defer c.Stop()
	ta, tb, tc := ChanOf(unsafe.Pointer(&a.C)), ChanOf(unsafe.Pointer(&b.C)), ChanOf(unsafe.Pointer(&c.C))
	if ta == nil || tb == nil || tc == nil || ta.Timer == nil || tb.Timer == nil || tc.Timer == nil {
		return -1
	}
	// The runtime's timer is a mutex, state bytes, counters, when and
	// period, then pointers: period lies within its first 64 bytes.
	for off := 8; off <= 56; off += 8 {
		if *(*int64)(unsafe.Add(ta.Timer, off)) == int64(p1) && *(*int64)(unsafe.Add(tb.Timer, off)) == int64(p2) && *(*int64)(unsafe.Add(tc.Timer, off)) == 0 {
			return off
		}
	}
	return -1
}

// IsTicker reports whether h is the channel of a ticker (a timer with a
// period).
func IsTicker(h *Chan) bool {
	if periodOffset < 0 || h == nil || h.Timer == nil {
		return false
	}
	return *(*int64)(unsafe.Add(h.Timer, periodOffset)) > 0
}

// Bubble mirrors the head of the runtime's synctestBubble
// (runtime/synctest.go, Go 1.26).
type Bubble struct {
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

// Bubble returns the synctest bubble that h was made in, or nil if none
// or if it cannot be read.
func (h *Chan) Bubble() *Bubble {
	if !TimersReadable || h == nil {
		return nil
	}
	return h.bubble
}

// OnlyTime reports whether nothing but a timer due after until can wake
// a goroutine of b: the caller is the only goroutine of b that is not
// durably blocked, and no timer of b's heap is due at or before until.
// The heap holds every timer that can wake a goroutine (a sleep, an
// AfterFunc, a context's deadline, the timer of a channel a goroutine
// is blocked on); a timer's channel that nobody waits on fires when it
// is received from. now is the bubble's clock as the caller read it
// (time.Now().UnixNano()): if b's does not read the same, b is not what
// it is taken for, and OnlyTime reports false.
func (b *Bubble) OnlyTime(now, until int64) bool {
	if b == nil || b.now != now || b.running != 1 || b.active != 0 {
		return false
	}
	// A zombie (a stopped timer not yet removed) may hold minWhenHeap
	// earlier: the caller then takes the longer way.
	m, mod := atomic.LoadInt64(&b.timers.minWhenHeap), atomic.LoadInt64(&b.timers.minWhenModified)
	return (m == 0 || m > until) && (mod == 0 || mod > until)
}
