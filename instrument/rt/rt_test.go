package rt

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/properties/control"
)

// Programs written as the rewriter writes them.

func TestPingPong(t *testing.T) {
	for seed := range uint64(20) {
		var got []int
		_, err := Run(t, Config{Strategy: control.Random(seed)}, func(t *testing.T) {
			ch := make(chan int)
			done := make(chan struct{})
			Go(func() {
				for i := range 3 {
					Send(ch, i)
				}
				Close(ch)
			})
			Go(func() {
				for {
					v, ok := Recv2(ch)
					if !ok {
						break
					}
					got = append(got, v)
				}
				Close(done)
			})
			Recv(done)
		})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(got) != 3 || got[0] != 0 || got[2] != 2 {
			t.Fatalf("seed %d: got %v", seed, got)
		}
	}
}

// abba is a program with a lock-order deadlock that some schedules hit.
func abba() {
	var a, b Mutex
	var wg WaitGroup
	wg.Add(2)
	Go(func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock(); wg.Done() })
	Go(func() { b.Lock(); a.Lock(); a.Unlock(); b.Unlock(); wg.Done() })
	wg.Wait()
}

func TestDeadlockABBA(t *testing.T) {
	found := 0
	for seed := range uint64(50) {
		_, err := Run(t, Config{Strategy: control.Random(seed)}, func(*testing.T) { abba() })
		var h *HangError
		if errors.As(err, &h) {
			if h.Leak || len(h.Blocked) != 3 {
				t.Fatalf("%v", err)
			}
			found++
			t.Log(err)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if found == 0 {
		t.Fatal("the AB-BA deadlock was not found in 50 runs")
	}
}

func TestLeakAndSleep(t *testing.T) {
	_, err := Run(t, Config{}, func(t *testing.T) {
		ch := make(chan int)
		Go(func() { Send(ch, 1) })
		start := time.Now()
		Sleep(time.Second)
		if time.Since(start) != time.Second {
			t.Errorf("slept %v", time.Since(start))
		}
	})
	if !errors.Is(err, ErrLeak) {
		t.Fatalf("want a leak, got %v", err)
	}
	t.Log(err)
}

func TestSelectTimeout(t *testing.T) {
	for seed := range uint64(10) {
		var which int
		_, err := Run(t, Config{Strategy: control.Random(seed)}, func(t *testing.T) {
			ch := make(chan int)
			Go(func() { Sleep(2 * time.Second); Select(true, SendCase(ch, 1)) })
			c0, c1 := RecvCase(ch), RecvCase(time.After(time.Second))
			which = Select(false, c0, c1)
			Sleep(5 * time.Second)
		})
		if err != nil || which != 1 {
			t.Fatalf("seed %d: case %d, %v", seed, which, err)
		}
	}
}

func TestReplay(t *testing.T) {
	body := func(t *testing.T) {
		x := 0
		var mu Mutex
		ch := make(chan int, 1)
		for range 3 {
			Go(func() { mu.Lock(); x++; mu.Unlock(); Send(ch, x); Recv(ch) })
		}
	}
	s, err := Run(t, Config{Strategy: control.Random(7)}, body)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		rp := control.NewReplay(s)
		s2, err := Run(t, Config{Strategy: rp}, body)
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
	_, err := Run(t, Config{}, func(t *testing.T) {
		stop := make(chan bool)
		Go(func() {
			for {
				c0, c1 := RecvCase(stop), RecvCase(time.After(time.Millisecond))
				if Select(false, c0, c1) == 0 {
					return
				}
			}
		})
	})
	var h *HangError
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
		_, err := Run(t, Config{Strategy: control.Random(seed)}, func(t *testing.T) {
			var mu Mutex
			done := make(chan bool)
			AfterFunc(time.Millisecond, func() {
				mu.Lock()
				order = append(order, "callback")
				mu.Unlock()
				Send(done, true)
			})
			mu.Lock()
			Sleep(2 * time.Millisecond)
			order = append(order, "main")
			mu.Unlock()
			Recv(done)
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
		_, err := Run(t, Config{Strategy: control.NewPCT(2, 50, seed)}, func(t *testing.T) {
			flag := false
			Go(func() { Yield(); flag = true })
			for {
				Yield()
				if flag {
					break
				}
				Gosched()
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
		_, err := Run(t, Config{Strategy: control.Random(seed)}, func(t *testing.T) {
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
				got = append(got, Recv(in))
			}
			Send(out, 7)
			got = append(got, Recv(in))
		})
		if err != nil || len(got) != 4 || got[3] != 70 {
			t.Fatalf("seed %d: %v, %v", seed, got, err)
		}
	}
}

// Go's channel rules hold under control: a nil channel is never ready,
// a send on a closed channel and a second close panic.
func TestChannelRules(t *testing.T) {
	_, err := Run(t, Config{}, func(t *testing.T) {
		var ch chan int
		Recv(ch)
	})
	var h *HangError
	if !errors.As(err, &h) || h.Leak || len(h.Blocked) != 1 || h.Blocked[0].Op != "chan receive" {
		t.Errorf("receive from nil: %v", err)
	}
	for name, body := range map[string]func(){
		"send on closed channel":  func() { ch := make(chan int, 1); Close(ch); Send(ch, 1) },
		"close of closed channel": func() { ch := make(chan int); Close(ch); Close(ch) },
	} {
		_, err := Run(t, Config{}, func(t *testing.T) { body() })
		var p *PanicError
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
	if AtExit(func() {}) {
		t.Fatal("AtExit outside a run registered a function")
	}
	var ended []string
	_, err := Run(t, Config{}, func(t *testing.T) {
		var wg WaitGroup
		for _, how := range []string{"return", "goexit", "recovered"} {
			wg.Add(1)
			Go(func() {
				defer wg.Done()
				if !AtExit(func() { ended = append(ended, how) }) {
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
