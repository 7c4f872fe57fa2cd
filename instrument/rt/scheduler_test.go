package rt

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/execspec/execspec/executor/point"
	"github.com/execspec/execspec/properties/control"
)

// A goroutine that waits on a predicate through the Scheduler runs once
// another makes it true, under every schedule tried; the count of
// goroutines includes both; InRun holds only inside the run.
func TestSchedulerBlock(t *testing.T) {
	if InRun() {
		t.Fatal("InRun outside a run")
	}
	for seed := range uint64(20) {
		var order []string
		var inRun bool
		var gs int
		_, err := Run(t, Config{Strategy: control.Random(seed)}, func(t *testing.T) {
			s := Scheduler()
			ready, done := false, false
			s.Go(func() {
				s.Block(point.Wake, func() bool { return ready })
				order = append(order, "woken")
				done = true
			})
			s.Yield(point.Poll)
			order = append(order, "ready")
			ready = true
			Block("done", func() bool { return done })
			inRun, gs = InRun(), Goroutines()
		})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if strings.Join(order, " ") != "ready woken" || !inRun || gs != 2 {
			t.Fatalf("seed %d: order %v, InRun %v, %d goroutines; want ready woken, true, 2", seed, order, inRun, gs)
		}
	}
}

// A wait that nothing can end is a deadlock, named with its operation.
func TestBlockDeadlock(t *testing.T) {
	_, err := Run(t, Config{}, func(t *testing.T) {
		Block("wait for a wake", func() bool { return false })
	})
	var h *HangError
	if !errors.As(err, &h) || !errors.Is(err, ErrDeadlock) || len(h.Blocked) != 1 || h.Blocked[0].Op != "wait for a wake" {
		t.Fatalf("got %v, want a deadlock of one goroutine in \"wait for a wake\"", err)
	}
}

// Outside a run the Scheduler is the Go runtime's.
func TestSchedulerOutsideRun(t *testing.T) {
	s := Scheduler()
	var flag atomic.Bool
	s.Go(func() { flag.Store(true) })
	s.Block(point.None, flag.Load)
	if Goroutines() != 0 {
		t.Fatal("Goroutines outside a run")
	}
}
