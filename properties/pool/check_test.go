package pool

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func findings(err error) map[string]bool {
	out := map[string]bool{}
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if f, ok := err.(*Finding); ok {
			out[f.Property] = true
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		walk(errors.Unwrap(err))
	}
	walk(err)
	return out
}

func TestCorrectPoolPasses(t *testing.T) {
	for name, cfg := range map[string]Config{
		"plain":       {Capacity: 3, Cases: 40},
		"nested":      {Capacity: 3, Cases: 40, Nested: true},
		"close-early": {Capacity: 3, Cases: 40, CloseEarly: true, Nested: true},
		"goexit":      {Capacity: 3, Cases: 40, Goexit: true, Nested: true},
		"pinned":      {Capacity: 3, Cases: 20, Pin: true, MaxSubmitters: 3},
	} {
		t.Run(name, func(t *testing.T) {
			if err := Run(func() Pool { return newFixed(3, nil) }, cfg); err != nil {
				t.Fatal(err)
			}
		})
	}
	// A pool that refuses when full passes when it says it may.
	full := func() Pool {
		p := newFixed(2, nil)
		var n atomic.Int64
		return Func(func(f func()) error {
			if n.Add(1)%4 == 0 {
				return errors.New("overloaded")
			}
			return p.Submit(f)
		}, p.Close)
	}
	if err := Run(full, Config{Cases: 20, MayRefuse: true}); err != nil {
		t.Fatal(err)
	}
	if err := Run(full, Config{Cases: 20}); !findings(err)[SubmitSucceeds] {
		t.Fatalf("refusals while open not reported: %v", err)
	}
	if err := Run(func() Pool { return &fixedCap{checkThenAct{cap: 2}} }, Config{Capacity: 2, Cases: 30, MaxSubmitters: 8}); err != nil {
		t.Fatal(err)
	}
}

func TestCheckWithRapid(t *testing.T) {
	Check(t, func() Pool { return newFixed(2, nil) }, Config{Capacity: 2, MaxTasks: 20, Nested: true, CloseEarly: true})
}

func TestFromGroup(t *testing.T) {
	if err := Run(func() Pool { return FromGroup(&waitGroup{}) }, Config{Cases: 20, Nested: true}); err != nil {
		t.Fatal(err)
	}
}

// waitGroup is the errgroup shape, unbounded.
type waitGroup struct{ wg sync.WaitGroup }

func (g *waitGroup) Go(f func() error) {
	g.wg.Add(1)
	go func() { defer g.wg.Done(); _ = f() }()
}

func (g *waitGroup) Wait() error { g.wg.Wait(); return nil }

func TestBrokenPoolsAreCaught(t *testing.T) {
	for _, tc := range []struct {
		name    string
		newPool func() Pool
		cfg     Config
		want    string
	}{
		{"drops tasks", func() Pool { return newFixed(2, func(p *fixed) { p.dropEvery = 5 }) }, Config{}, NoneLost},
		{"runs a task twice", func() Pool { return newFixed(2, func(p *fixed) { p.runTwiceEvery = 4 }) }, Config{}, ExactlyOnce},
		{"refuses but runs", func() Pool { return newFixed(2, func(p *fixed) { p.refuseRunEvery = 6 }) }, Config{}, RefusedNotRun},
		{"Close does not wait", func() Pool { return newFixed(2, func(p *fixed) { p.closeNoWait = true }) }, Config{}, ShutdownWaits},
		{"shutdown drops queued tasks", func() Pool { return newFixed(1, func(p *fixed) { p.closeDrops = true }) }, Config{}, NoneLost},
		{"Close hangs on dropped tasks", func() Pool {
			return newFixed(1, func(p *fixed) { p.closeDrops, p.closeSpins = true, true })
		}, Config{Timeout: 300 * time.Millisecond}, NoHang},
		{"a Goexit kills a worker for good", func() Pool { return newFixed(2, func(p *fixed) { p.noRespawn = true }) }, Config{Goexit: true}, NoneLost},
		{"Close waits for a count that Goexit skips", func() Pool { return newFixed(2, func(p *fixed) { p.activeCount = true }) }, Config{Goexit: true, Timeout: 300 * time.Millisecond}, NoHang},
		{"Submit panics", func() Pool {
			p := newFixed(2, nil)
			n := 0
			var mu sync.Mutex
			return Func(func(f func()) error {
				mu.Lock()
				n++
				k := n
				mu.Unlock()
				if k == 3 {
					panic("submit: send on closed channel")
				}
				return p.Submit(f)
			}, p.Close)
		}, Config{}, NoPanic},
		{"Close panics", func() Pool {
			p := newFixed(2, nil)
			return Func(p.Submit, func() error { _ = p.Close(); panic("close of closed channel") })
		}, Config{}, NoPanic},
		{"newPool panics", func() Pool { panic("no pool today") }, Config{}, NoPanic},
		{"ignores its capacity", func() Pool { return &goPerTask{} }, Config{Capacity: 4}, CapacityBound},
		{"check-then-act on its capacity", func() Pool { return &checkThenAct{cap: 2} }, Config{Capacity: 2, MaxSubmitters: 8, Cases: 200}, CapacityBound},
		{"check-then-act, pinned submitters", func() Pool { return &checkThenAct{cap: 2} }, Config{Capacity: 2, MaxSubmitters: 4, Cases: 200, Pin: true}, CapacityBound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := Run(tc.newPool, tc.cfg)
			if err == nil {
				t.Fatalf("not caught")
			}
			if !errors.Is(err, ErrViolated) || !findings(err)[tc.want] {
				t.Fatalf("caught as %v, want %s:\n%v", findings(err), tc.want, err)
			}
			t.Logf("%v: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
}

func TestHangNamesTasks(t *testing.T) {
	// A pool whose workers never start: Submit blocks once its buffer of
	// one is full.
	newPool := func() Pool {
		ch := make(chan func(), 1)
		return Func(func(f func()) error { ch <- f; return nil }, func() error { return nil })
	}
	w := Workload{Submitters: 1, Tasks: make([]Task, 3)}
	err := RunWorkload(newPool, w, Config{Timeout: 100 * time.Millisecond})
	var f *Finding
	if !errors.As(err, &f) || f.Property != NoHang {
		t.Fatalf("got %v", err)
	}
	for _, s := range []string{"submitter 0 in Submit of task 1", "3 tasks never ran (tasks 0, 1, 2)"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q lacks %q", err, s)
		}
	}
}
