package rt_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/instrument/rt/rtstd"
	"github.com/execspec/execspec/internal/cputime"
	"github.com/execspec/execspec/properties/control"
)

// poolish is a small worker pool written as the rewriter writes one, in
// the shape of ants (the pool examples/poolcheck measures): a spin lock
// (spinLock, rules spincas and goschedloop), two housekeeping goroutines
// blocked in a select on a done channel and a ticker (ants' purge and
// clock), workers that receive tasks from a channel and count themselves
// with atomics under the spin lock, submitters, and a WaitGroup the body
// waits on. Most of its steps are what ants' are: yields before atomics,
// with several goroutines blocked at every decision.
func poolish() {
	var lock spinLock
	lockSpin, unlockSpin := lock.Lock, lock.Unlock
	done := make(chan struct{})
	for range 2 {
		rt.Go(func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				c0, c1 := rt.RecvCase(done), rt.RecvCase(t.C)
				if rt.Select(false, c0, c1) == 0 {
					return
				}
			}
		})
	}
	tasks := make(chan int)
	var wg rtstd.WaitGroup
	var running, ran int32
	for range 3 {
		rt.Go(func() {
			for {
				if _, ok := rt.Recv2(tasks); !ok {
					return
				}
				lockSpin()
				rt.Then(rt.Yield(), atomic.AddInt32(&running, 1))
				unlockSpin()
				rt.Then(rt.Yield(), atomic.AddInt32(&ran, 1))
				lockSpin()
				rt.Then(rt.Yield(), atomic.AddInt32(&running, -1))
				unlockSpin()
				wg.Done()
			}
		})
	}
	var subs rtstd.WaitGroup
	for s := range 4 {
		subs.Add(1)
		rt.Go(func() {
			defer subs.Done()
			for i := range 8 {
				wg.Add(1)
				rt.Send(tasks, s*8+i)
			}
		})
	}
	subs.Wait()
	wg.Wait()
	rt.Close(done)
	rt.Close(tasks)
}

// BenchmarkStep is the cost of a yield point (a step) of the controlled
// runtime: runs of poolish, random schedules, all in one Bubble
// as the pool suite makes them. It reports steps per run, nanoseconds
// and CPU nanoseconds (user + system of the process) per step, and runs
// per CPU-second.
//
//	go test -run '^$' -bench Step ./instrument/rt
func BenchmarkStep(b *testing.B) {
	inTest(b, func(t *testing.T) {
		bub, err := rt.NewBubble(t)
		if err != nil {
			t.Fatal(err)
		}
		defer bub.Close()
		steps, runs := 0, 0
		cpu0 := cputime.Process()
		for b.Loop() {
			sc, err := bub.Run(rt.Config{Strategy: control.Random(uint64(runs))}, func(*testing.T) { poolish() })
			if err != nil {
				t.Fatal(err)
			}
			steps += sc.Steps
			runs++
		}
		cpu := cputime.Process() - cpu0
		b.ReportMetric(float64(steps)/float64(runs), "steps/run")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
		if cpu > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(steps), "cpu-ns/step")
			b.ReportMetric(float64(runs)/cpu.Seconds(), "runs/cpu-s")
		}
	})
}

// inTest calls f with a *testing.T of a test made for it, which a
// benchmark has not and a synctest bubble (a Bubble's) needs; f runs
// while b's clock runs, on the test's goroutine, once (RunTests repeats
// its tests for -count and -cpu).
func inTest(b *testing.B, f func(t *testing.T)) {
	b.Helper()
	all := func(string, string) (bool, error) { return true, nil }
	ran := false
	once := func(t *testing.T) {
		if !ran {
			ran = true
			f(t)
		}
	}
	if !testing.RunTests(all, []testing.InternalTest{{Name: b.Name(), F: once}}) {
		b.Fatal("the benchmark's test failed")
	}
}
