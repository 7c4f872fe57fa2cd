package rt_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/instrument/rt/rtstd"
)

// timed is a program whose goroutines wait mostly for time: sleeps of
// the same and of different instants, a ticker's housekeeping loop that
// a context stops, a select on a timer beside a channel that a
// controlled goroutine may or may not send on in time, a context with a
// deadline (the runtime's AfterFunc, not the run's), and a channel closed
// by a time.AfterFunc that was not rewritten.
func timed() string {
	start := time.Now()
	var log []string
	note := func(s string, args ...any) { log = append(log, fmt.Sprintf(s, args...)) }
	ctx, cancel := context.WithCancel(context.Background())
	deadline, stop := context.WithTimeout(context.Background(), 7*time.Millisecond)
	defer stop()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	var wg rtstd.WaitGroup
	wg.Add(1)
	rt.Go(func() { // housekeeping
		defer wg.Done()
		for n := 0; ; n++ {
			c0, c1 := rt.RecvCase(ctx.Done()), rt.RecvCase(tick.C)
			if rt.Select(false, c0, c1) == 0 {
				note("purge stopped after %d ticks", n)
				return
			}
		}
	})
	work := make(chan int)
	for i := range 3 {
		wg.Add(1)
		rt.Go(func() {
			defer wg.Done()
			rt.Sleep(time.Duration(1+i%2) * time.Millisecond)
			c0, c1 := rt.SendCase(work, i), rt.RecvCase(time.After(3*time.Millisecond))
			if rt.Select(false, c0, c1) == 1 {
				note("worker %d timed out", i)
			}
		})
	}
	// Two goroutines wait for one value that code not rewritten sends:
	// the first to wait gets it, as the runtime's queue has it.
	fed := make(chan int, 1)
	time.AfterFunc(4*time.Millisecond, func() { fed <- 1 })
	for i := range 2 {
		wg.Add(1)
		rt.Go(func() {
			defer wg.Done()
			c0, c1 := rt.RecvCase(fed), rt.RecvCase(time.After(6*time.Millisecond))
			if rt.Select(false, c0, c1) == 0 {
				note("fed %d", i)
			}
		})
	}
	closed := make(chan struct{})
	time.AfterFunc(5*time.Millisecond, func() { close(closed) }) // not rewritten
	for range 2 {
		c0, c1 := rt.RecvCase(work), rt.RecvCase(deadline.Done())
		switch rt.Select(false, c0, c1) {
		case 0:
			note("got %d", c0.V)
		case 1:
			note("deadline")
		}
		rt.Sleep(time.Millisecond)
	}
	rt.Recv(closed)
	note("closed after %v", time.Since(start))
	rt.Recv2(deadline.Done())
	cancel()
	wg.Wait()
	return fmt.Sprint(log)
}

// The external phase without handovers (waitFirst, on the coordinator
// or on the goroutine holding control: holderPhase) changes no run: for
// each seed, strategy and timer mode, the run with it and the run that
// hands each blocked goroutine its real operation make the same choices,
// steps and checksum and get the same result. Both must also be taken,
// and the phase that waits for a timer alone (timeonly.go) too.
func TestExternalWaitKeepsRuns(t *testing.T) {
	before, held, timeOnly := rt.WaitsOnCoordinator.Load(), rt.HolderPhases.Load(), rt.OnlyTimePhases.Load()
	defer func() { *rt.AlwaysLaunch = false }()
	for _, early := range []bool{false, true} {
		for seed := range uint64(40) {
			twoWays(t, fmt.Sprintf("early %v, launching", early), seed, rt.Config{EarlyTimers: early}, rt.AlwaysLaunch, timed)
		}
	}
	if rt.WaitsOnCoordinator.Load() == before || rt.HolderPhases.Load() == held || *rt.TimersReadable && rt.OnlyTimePhases.Load() == timeOnly {
		t.Fatalf("the external phase without handovers ran %d times, %d of them on the goroutine holding control, %d for a timer alone", rt.WaitsOnCoordinator.Load()-before, rt.HolderPhases.Load()-held, rt.OnlyTimePhases.Load()-timeOnly)
	}
}

// A goroutine blocked in `select {}` is among those an external phase
// launches (here the first): the phase waits for the others' timer, and
// the run ends in a deadlock once only that goroutine is left.
func TestExternalWaitSelectNothing(t *testing.T) {
	_, err := rt.Run(t, rt.Config{}, func(*testing.T) {
		rt.Go(func() { rt.Sleep(time.Millisecond) })
		rt.Select(false)
	})
	if !errors.Is(err, rt.ErrDeadlock) {
		t.Fatalf("got %v, want a deadlock", err)
	}
}
