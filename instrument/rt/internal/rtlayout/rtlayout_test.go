package rtlayout

import (
	"testing"
	"testing/synctest"
	"time"
	"unsafe"
)

// TestPeriodFound: a ticker's channel is told from a timer's.
func TestPeriodFound(t *testing.T) {
	if !PeriodFound {
		t.Fatal("the period of the runtime's timers was not found: housekeeping is not recognised")
	}
	tk := time.NewTicker(time.Second)
	defer tk.Stop()
	tm := time.NewTimer(time.Second)
	defer tm.Stop()
	if !IsTicker(ChanOf(unsafe.Pointer(&tk.C))) || IsTicker(ChanOf(unsafe.Pointer(&tm.C))) {
		t.Fatal("a ticker and a timer not told apart")
	}
}

// TestOnlyTime: the runtime's bubble and timers are read where
// TimersReadable says (the bubble's clock is time.Now's, a timer's when
// is on it), and what OnlyTime says of time is right: no timer of the
// bubble, a timer's channel nobody waits on, a sleep or an AfterFunc due
// later leave only time; a sleep or an AfterFunc due at or before the
// instant, or a goroutine that is not durably blocked (one waiting on a
// channel from outside the bubble), do not.
func TestOnlyTime(t *testing.T) {
	if !TimersReadable {
		t.Skip("the runtime's bubble is read on Go 1.26, 64-bit, only")
	}
	outside := make(chan int)
	if b := ChanOf(unsafe.Pointer(&outside)).Bubble(); b != nil {
		t.Fatalf("a channel made outside a bubble has bubble %p", b)
	}
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan int)
		b := ChanOf(unsafe.Pointer(&ch)).Bubble()
		now := time.Now().UnixNano()
		if b == nil || b.now != now {
			t.Fatalf("bubble %p: its clock is not time.Now's (%d)", b, now)
		}
		sec := int64(time.Second)
		check := func(what string, until int64, want bool) {
			t.Helper()
			if got := b.OnlyTime(now, until); got != want {
				t.Errorf("%s: OnlyTime(now, now+%v) = %v, want %v", what, time.Duration(until-now), got, want)
			}
		}
		synctest.Wait() // the bubble's other goroutines (the test's) block
		check("nothing pending", now+3600*sec, true)
		tm := time.NewTimer(time.Second) // its channel: nobody waits on it
		if h := ChanOf(unsafe.Pointer(&tm.C)); TimerWhen(h) != now+sec || !TimerArmed(h) {
			t.Fatalf("a timer due in a second: when %d, armed %v; now %d", TimerWhen(h), TimerArmed(h), now)
		}
		check("a timer's channel", now+3600*sec, true)
		tm.Stop()
		go func() { time.Sleep(2 * time.Second) }()
		synctest.Wait()
		check("a sleep due later", now+2*sec-1, true)
		check("a sleep due then", now+2*sec, false)
		af := time.AfterFunc(time.Second, func() { close(ch) })
		check("an AfterFunc due later", now+sec-1, true)
		check("an AfterFunc due then", now+sec, false)
		af.Stop()
		go func() { <-outside }() // not durably blocked
		check("a goroutine that can run", now+sec-1, false)
		outside <- 1
		if b.OnlyTime(now+1, now+1) {
			t.Error("onlyTime trusted a clock that is not the bubble's")
		}
		time.Sleep(2 * time.Second) // the sleeper ends
	})
}
