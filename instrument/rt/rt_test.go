package rt_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/instrument/rt/rtstd"
	"github.com/execspec/execspec/properties/control"
)

// Programs written as the rewriter writes them.

func TestPingPong(t *testing.T) {
	for seed := range uint64(20) {
		var got []int
		_, err := rt.Run(t, rt.Config{Strategy: control.Random(seed)}, func(t *testing.T) {
			ch := make(chan int)
			done := make(chan struct{})
			rt.Go(func() {
				for i := range 3 {
					rt.Send(ch, i)
				}
				rt.Close(ch)
			})
			rt.Go(func() {
				for {
					v, ok := rt.Recv2(ch)
					if !ok {
						break
					}
					got = append(got, v)
				}
				rt.Close(done)
			})
			rt.Recv(done)
		})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(got) != 3 || got[0] != 0 || got[2] != 2 {
			t.Fatalf("seed %d: got %v", seed, got)
		}
	}
}

func TestLeakAndSleep(t *testing.T) {
	_, err := rt.Run(t, rt.Config{}, func(t *testing.T) {
		ch := make(chan int)
		rt.Go(func() { rt.Send(ch, 1) })
		start := time.Now()
		rt.Sleep(time.Second)
		if time.Since(start) != time.Second {
			t.Errorf("slept %v", time.Since(start))
		}
	})
	if !errors.Is(err, rt.ErrLeak) {
		t.Fatalf("want a leak, got %v", err)
	}
	t.Log(err)
}

func TestSelectTimeout(t *testing.T) {
	for seed := range uint64(10) {
		var which int
		_, err := rt.Run(t, rt.Config{Strategy: control.Random(seed)}, func(t *testing.T) {
			ch := make(chan int)
			rt.Go(func() { rt.Sleep(2 * time.Second); rt.Select(true, rt.SendCase(ch, 1)) })
			c0, c1 := rt.RecvCase(ch), rt.RecvCase(time.After(time.Second))
			which = rt.Select(false, c0, c1)
			rt.Sleep(5 * time.Second)
		})
		if err != nil || which != 1 {
			t.Fatalf("seed %d: case %d, %v", seed, which, err)
		}
	}
}

func TestReplay(t *testing.T) {
	body := func(t *testing.T) {
		x := 0
		var mu rtstd.Mutex
		ch := make(chan int, 1)
		for range 3 {
			rt.Go(func() { mu.Lock(); x++; mu.Unlock(); rt.Send(ch, x); rt.Recv(ch) })
		}
	}
	s, err := rt.Run(t, rt.Config{Strategy: control.Random(7)}, body)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		rp := control.NewReplay(s)
		s2, err := rt.Run(t, rt.Config{Strategy: rp}, body)
		if err != nil {
			t.Fatal(err)
		}
		if derr := rp.Check(s2); derr != nil {
			t.Fatal(derr)
		}
	}
}

// A goroutine that goes on sleeping and waking after the test returned is
// leaked too: reported once LeakAfter of virtual time has passed.
func TestLeakStillRunning(t *testing.T) {
	_, err := rt.Run(t, rt.Config{}, func(t *testing.T) {
		stop := make(chan bool)
		rt.Go(func() {
			for {
				c0, c1 := rt.RecvCase(stop), rt.RecvCase(time.After(time.Millisecond))
				if rt.Select(false, c0, c1) == 0 {
					return
				}
			}
		})
	})
	var h *rt.HangError
	if !errors.As(err, &h) || !h.Leak || len(h.Blocked) != 1 {
		t.Fatalf("want a leak of one goroutine, got %v", err)
	}
}

// A time.AfterFunc callback runs on a goroutine the scheduler adopts: the
// mutex it takes is the controlled one, held by goroutine 0 across a sleep
// longer than the timer's.
func TestAfterFuncAdopted(t *testing.T) {
	for seed := range uint64(10) {
		var order []string
		_, err := rt.Run(t, rt.Config{Strategy: control.Random(seed)}, func(t *testing.T) {
			var mu rtstd.Mutex
			done := make(chan bool)
			rt.AfterFunc(time.Millisecond, func() {
				mu.Lock()
				order = append(order, "callback")
				mu.Unlock()
				rt.Send(done, true)
			})
			mu.Lock()
			rt.Sleep(2 * time.Millisecond)
			order = append(order, "main")
			mu.Unlock()
			rt.Recv(done)
		})
		if err != nil || len(order) != 2 || order[0] != "main" {
			t.Fatalf("seed %d: %v, %v", seed, order, err)
		}
	}
}

// A spin loop (CAS retried with Gosched) waiting for another goroutine
// ends under PCT too: the fairness bound runs the other goroutine.
func TestFairSpin(t *testing.T) {
	for seed := range uint64(10) {
		_, err := rt.Run(t, rt.Config{Strategy: control.NewPCT(2, 50, seed)}, func(t *testing.T) {
			flag := false
			rt.Go(func() { rt.Yield(); flag = true })
			for {
				rt.Yield()
				if flag {
					break
				}
				rt.Gosched()
			}
		})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// Uncontrolled goroutines (started by code that was not rewritten) meet
// controlled ones on channels: their blocked sends and receives are seen
// without taking their values, and a controlled goroutine waiting for
// them is woken for real.
func TestUncontrolledPeers(t *testing.T) {
	for seed := range uint64(10) {
		var got []int
		_, err := rt.Run(t, rt.Config{Strategy: control.Random(seed)}, func(t *testing.T) {
			in := make(chan int)
			out := make(chan int)
			go func() { // uncontrolled
				for i := range 3 {
					in <- i
				}
				v := <-out
				in <- v * 10
			}()
			for range 3 {
				got = append(got, rt.Recv(in))
			}
			rt.Send(out, 7)
			got = append(got, rt.Recv(in))
		})
		if err != nil || len(got) != 4 || got[3] != 70 {
			t.Fatalf("seed %d: %v, %v", seed, got, err)
		}
	}
}

// Go's channel rules hold under control: a nil channel is never ready,
// a send on a closed channel and a second close panic.
func TestChannelRules(t *testing.T) {
	_, err := rt.Run(t, rt.Config{}, func(t *testing.T) {
		var ch chan int
		rt.Recv(ch)
	})
	var h *rt.HangError
	if !errors.As(err, &h) || h.Leak || len(h.Blocked) != 1 || h.Blocked[0].Op != "chan receive" {
		t.Errorf("receive from nil: %v", err)
	}
	for name, body := range map[string]func(){
		"send on closed channel":  func() { ch := make(chan int, 1); rt.Close(ch); rt.Send(ch, 1) },
		"close of closed channel": func() { ch := make(chan int); rt.Close(ch); rt.Close(ch) },
	} {
		_, err := rt.Run(t, rt.Config{}, func(t *testing.T) { body() })
		var p *rt.PanicError
		if !errors.As(err, &p) || !strings.Contains(fmt.Sprint(p.Value), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestAtExit: a function registered by a controlled goroutine is called
// when it ends, however it ends (return, runtime.Goexit, a recovered
// panic's return), on that goroutine, after its deferred calls; outside
// a controlled goroutine nothing is registered.
func TestAtExit(t *testing.T) {
	if rt.AtExit(func() {}) {
		t.Fatal("AtExit outside a run registered a function")
	}
	var ended []string
	_, err := rt.Run(t, rt.Config{}, func(t *testing.T) {
		var wg rtstd.WaitGroup
		for _, how := range []string{"return", "goexit", "recovered"} {
			wg.Add(1)
			rt.Go(func() {
				defer wg.Done()
				if !rt.AtExit(func() { ended = append(ended, how) }) {
					t.Errorf("%s: not registered", how)
				}
				switch how {
				case "goexit":
					runtime.Goexit()
				case "recovered":
					defer func() { _ = recover() }()
					panic(how)
				}
			})
			wg.Wait()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ended)
	if want := []string{"goexit", "recovered", "return"}; !slices.Equal(ended, want) {
		t.Errorf("ended %v, want %v", ended, want)
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
			var mu rtstd.Mutex
			for n := 1; ; n++ {
				rt.Recv(tk.C)
				mu.Lock()
				mu.Unlock()
				if n == wakeAfter {
					rt.Send(ch, n)
					return
				}
			}
		}
	}
	for seed := range uint64(5) {
		_, err := rt.Run(t, rt.Config{Strategy: control.Random(seed), MaxSteps: 1_000_000}, func(t *testing.T) {
			ch := make(chan int)
			rt.Go(purge(ch, -1))
			rt.Recv(ch)
		})
		var h *rt.HangError
		if !errors.As(err, &h) || !errors.Is(err, rt.ErrDeadlock) || len(h.Housekeeping) != 1 || h.Steps > 1000 {
			t.Fatalf("seed %d: want a deadlock past housekeeping, got %v", seed, err)
		}
		_, err = rt.Run(t, rt.Config{Strategy: control.Random(seed)}, func(t *testing.T) {
			ch := make(chan int)
			rt.Go(purge(ch, 30))
			if rt.Recv(ch) != 30 {
				t.Error("woken by the wrong tick")
			}
		})
		if err != nil {
			t.Fatalf("seed %d: a purge that wakes the waiter after 30 ticks: %v", seed, err)
		}
	}
}
