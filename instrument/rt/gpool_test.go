package rt

import (
	"errors"
	"runtime"
	"testing"

	"github.com/execspec/execspec/internal/goid"
	"github.com/execspec/execspec/properties/control/sched"
)

// freeGPs returns the descriptors of b's free workers.
func freeGPs(b *Bubble) map[uintptr]bool {
	m := map[uintptr]bool{}
	for _, w := range b.pool.Free() {
		m[w.GP()] = true
	}
	return m
}

// A goroutine that panicked, called runtime.Goexit, leaked, was blocked
// in a deadlock or was unwound by a stopped run does not go back to the
// free list; one that returned does, the run's goroutine 0 included.
func TestNotReused(t *testing.T) {
	b, err := NewBubble(t)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Run(Config{}, func(*testing.T) {
		done := make(chan int)
		for range 4 {
			Go(func() { Send(done, 1) })
		}
		for range 4 {
			Recv(done)
		}
	}); err != nil {
		t.Fatal(err)
	}
	var main, other uintptr
	cases := []struct {
		name       string
		body       func()
		wantErr    func(error) bool
		mainFreed  bool
		otherFreed bool
	}{
		{"returned", func() {
			main = goid.Curg()
			done := make(chan int)
			Go(func() { other = goid.Curg(); Send(done, 1) })
			Recv(done)
		}, func(err error) bool { return err == nil }, true, true},
		{"panicked", func() {
			main = goid.Curg()
			Go(func() { other = goid.Curg(); panic("boom") })
			Recv(make(chan int)) // unwound
		}, func(err error) bool { var p *PanicError; return errors.As(err, &p) }, false, false},
		{"Goexit", func() {
			main = goid.Curg()
			done := make(chan int)
			Go(func() {
				other = goid.Curg()
				defer Close(done)
				runtime.Goexit()
			})
			Recv(done)
		}, func(err error) bool { return err == nil }, true, false},
		{"leaked", func() {
			main = goid.Curg()
			Go(func() { other = goid.Curg(); Recv(make(chan int)) })
		}, func(err error) bool { return errors.Is(err, ErrLeak) }, true, false},
		{"deadlock", func() {
			main = goid.Curg()
			ch := make(chan int)
			Go(func() { other = goid.Curg(); Recv(ch) })
			Recv(ch)
		}, func(err error) bool { return errors.Is(err, ErrDeadlock) }, false, false},
		{"budget", func() {
			main = goid.Curg()
			Go(func() {
				other = goid.Curg()
				for {
					Gosched()
				}
			})
			for {
				Gosched()
			}
		}, func(err error) bool { return errors.Is(err, sched.ErrBudget) }, false, false},
	}
	for _, c := range cases {
		main, other = 0, 0
		_, err := b.Run(Config{MaxSteps: 100}, func(*testing.T) { c.body() })
		if !c.wantErr(err) {
			t.Fatalf("%s: unexpected error %v", c.name, err)
		}
		free := freeGPs(b)
		if main == 0 || other == 0 || main == other {
			t.Fatalf("%s: descriptors %#x, %#x", c.name, main, other)
		}
		if free[main] != c.mainFreed || free[other] != c.otherFreed {
			t.Errorf("%s: goroutine 0 free %v, goroutine 1 free %v; want %v, %v", c.name, free[main], free[other], c.mainFreed, c.otherFreed)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}
