package stress

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPinReadsBack(t *testing.T) {
	cpus, err := CPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) == 0 {
		t.Fatal("no CPUs")
	}
	for _, cpu := range cpus {
		var got []int
		var gerr error
		pin := OnCPU(cpu, func() { got, gerr = ThreadCPUs() })
		if !pin.Pinned {
			t.Skipf("pinning is not available here: %s", pin)
		}
		if gerr != nil {
			t.Fatal(gerr)
		}
		if !slices.Equal(got, []int{cpu}) {
			t.Fatalf("pinned to CPU %d, but the thread may run on %v", cpu, got)
		}
	}
	// The pinned threads ended with their goroutines: a new locked
	// goroutine gets a thread with the process's full set.
	done := make(chan []int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		got, _ := ThreadCPUs()
		done <- got
	}()
	if got := <-done; runtime.GOOS == "linux" && !slices.Equal(got, cpus) {
		t.Fatalf("affinity leaked: a fresh thread may run on %v, the process on %v", got, cpus)
	}
}

func TestPinFailsGracefully(t *testing.T) {
	ran := false
	pin := OnCPU(100_000, func() { ran = true })
	if pin.Pinned || !ran || pin.Reason == "" {
		t.Fatalf("%+v, ran %v", pin, ran)
	}
	if !strings.Contains(pin.String(), "not pinned to CPU 100000") {
		t.Fatal(pin.String())
	}
	t.Log(pin)
	cpus, _ := CPUs()
	if runtime.GOOS == "linux" {
		// A CPU that exists in the mask but not in the allowed set.
		outside := -1
		for c := 0; c < 1024; c++ {
			if !slices.Contains(cpus, c) {
				outside = c
				break
			}
		}
		pin = OnCPU(outside, func() {})
		if pin.Pinned || !strings.Contains(pin.Reason, "sched_setaffinity") {
			t.Fatalf("CPU %d: %+v", outside, pin)
		}
		t.Log(pin)
	}
}

func TestThreadPanicReachesWait(t *testing.T) {
	th := Go(0, func() { panic("boom") })
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v", r)
		}
	}()
	th.Wait()
}

func TestTogether(t *testing.T) {
	cpus, err := CPUs()
	if err != nil {
		t.Fatal(err)
	}
	var started [4]time.Time
	fns := make([]func(), 4)
	for i := range fns {
		fns[i] = func() { started[i] = time.Now() }
	}
	pins, met := Together(cpus, 2*time.Second, fns...)
	if !met {
		t.Fatal("the parties did not meet")
	}
	for i, p := range pins {
		if p.CPU != cpus[i%len(cpus)] {
			t.Fatalf("function %d on %+v", i, p)
		}
		if started[i].IsZero() {
			t.Fatalf("function %d did not run", i)
		}
	}
}

func TestBarrierRounds(t *testing.T) {
	const parties, rounds = 3, 200
	b := NewBarrier(parties, 5*time.Second)
	var phase [parties]atomic.Int32
	var wg sync.WaitGroup
	var bad atomic.Int32
	for p := range parties {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range int32(rounds) {
				phase[p].Store(r)
				if !b.Wait() {
					bad.Add(1)
					return
				}
				// Everyone has reached round r.
				for q := range parties {
					if phase[q].Load() < r {
						bad.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 || b.Broken() {
		t.Fatalf("%d parties passed early or gave up", bad.Load())
	}
}

func TestBarrierGivesUp(t *testing.T) {
	b := NewBarrier(2, 50*time.Millisecond)
	start := time.Now()
	if b.Wait() {
		t.Fatal("a barrier of 2 opened for 1")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("gave up after %v", d)
	}
	if !b.Broken() || b.Wait() {
		t.Fatal("a broken barrier opened")
	}
}

func TestYielder(t *testing.T) {
	never, always, half := NewYielder(0), NewYielder(1), NewYielder(0.5)
	n := 0
	for range 1000 {
		if never.Maybe() {
			t.Fatal("p=0 yielded")
		}
		if !always.Maybe() {
			t.Fatal("p=1 did not yield")
		}
		if half.Maybe() {
			n++
		}
	}
	if n < 350 || n > 650 {
		t.Fatalf("p=0.5 yielded %d times in 1000", n)
	}
	if (Yielder{}).Maybe() {
		t.Fatal("zero Yielder yielded")
	}
}

func TestRepeat(t *testing.T) {
	calls := 0
	boom := errors.New("boom")
	err := Repeat(10, func(i int) error {
		calls++
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls != 4 || !strings.Contains(err.Error(), "repetition 4 of 10") {
		t.Fatalf("%v after %d calls", err, calls)
	}
	failed, first := RepeatAll(10, func(i int) error {
		if i%3 == 0 {
			return boom
		}
		return nil
	})
	if failed != 4 || !errors.Is(first, boom) || !strings.Contains(first.Error(), "repetition 1 of 10") {
		t.Fatalf("%d failed, first %v", failed, first)
	}
	if err := Repeat(5, func(int) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// The helpers together find a real race that plain runs rarely show: two
// pinned threads started at a barrier increment a counter with a
// non-atomic read-modify-write (through atomics, so the race detector stays
// quiet, but split in two so updates are lost).
func TestFindsLostUpdates(t *testing.T) {
	cpus, _ := CPUs()
	if len(cpus) < 2 {
		t.Skip("needs two CPUs")
	}
	y := NewYielder(0.01)
	failed, _ := RepeatAll(50, func(int) error {
		var x atomic.Int64
		inc := func() {
			for range 2000 {
				v := x.Load()
				y.Maybe()
				x.Store(v + 1)
			}
		}
		if _, met := Together(cpus[:2], time.Second, inc, inc); !met {
			return errors.New("did not meet")
		}
		if x.Load() != 4000 {
			return errors.New("lost update")
		}
		return nil
	})
	t.Logf("lost updates in %d of 50 repetitions", failed)
	if failed == 0 {
		t.Fatal("no lost update in 50 pinned repetitions")
	}
}
