package rt

import (
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/execspec/execspec/properties/control"
)

func TestPeriodOffsetFound(t *testing.T) {
	if periodOffset < 0 {
		t.Fatal("the period of the runtime's timers was not found: housekeeping is not recognised")
	}
	tk := time.NewTicker(time.Second)
	defer tk.Stop()
	tm := time.NewTimer(time.Second)
	defer tm.Stop()
	if !isTicker(hchanOf(unsafe.Pointer(&tk.C))) || isTicker(hchanOf(unsafe.Pointer(&tm.C))) {
		t.Fatal("a ticker and a timer not told apart")
	}
}

// A goroutine stuck on a channel while a ticker's goroutine purges
// every second is a deadlock, not a run to the step budget; the same
// ticker's goroutine waking the stuck one after a few ticks is not.
func TestHousekeepingHang(t *testing.T) {
	purge := func(ch chan int, wakeAfter int) func() {
		return func() {
			tk := time.NewTicker(time.Second)
			defer tk.Stop()
			var mu Mutex
			for n := 1; ; n++ {
				Recv(tk.C)
				mu.Lock()
				mu.Unlock()
				if n == wakeAfter {
					Send(ch, n)
					return
				}
			}
		}
	}
	for seed := range uint64(5) {
		_, err := Run(t, Config{Strategy: control.Random(seed), MaxSteps: 1_000_000}, func(t *testing.T) {
			ch := make(chan int)
			Go(purge(ch, -1))
			Recv(ch)
		})
		var h *HangError
		if !errors.As(err, &h) || !errors.Is(err, ErrDeadlock) || len(h.Housekeeping) != 1 || h.Steps > 1000 {
			t.Fatalf("seed %d: want a deadlock past housekeeping, got %v", seed, err)
		}
		_, err = Run(t, Config{Strategy: control.Random(seed)}, func(t *testing.T) {
			ch := make(chan int)
			Go(purge(ch, 30))
			if Recv(ch) != 30 {
				t.Error("woken by the wrong tick")
			}
		})
		if err != nil {
			t.Fatalf("seed %d: a purge that wakes the waiter after 30 ticks: %v", seed, err)
		}
	}
}
