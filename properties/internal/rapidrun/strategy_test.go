package rapidrun

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/properties/control"
)

type panicky struct{}

func (panicky) Choose(control.Decision) int { panic("out of data") }

type fixed int

func (f fixed) Choose(control.Decision) int { return int(f) }

// The strategy of a case on the engine: a select's cases (every candidate
// the current goroutine) are drawn by itself, goroutines by the strategy
// it wraps, and a panic of a draw stops the run instead of escaping the
// scheduler, to be raised again on the test's goroutine.
func TestRapidStrategy(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := &Strategy{s: fixed(1), t: rt}
		if i := s.Choose(control.Decision{Current: 0, CurrentRunnable: true, Runnable: []int{0, 3, 5}}); i != 1 {
			t.Fatalf("a choice among goroutines: %d, want the wrapped strategy's 1", i)
		}
		if i := s.Choose(control.Decision{Current: 2, CurrentRunnable: true, Runnable: []int{2, 2, 2}}); i < 0 || i > 2 {
			t.Fatalf("a select's case: %d, want one of 0..2", i)
		}
		if s.Err() != nil {
			t.Fatalf("Err after good choices: %v", s.Err())
		}
		p := &Strategy{s: panicky{}, t: rt}
		if i := p.Choose(control.Decision{Current: 0, Runnable: []int{0, 1}}); i != -1 || p.Err() == nil || !p.panicked || p.pan != "out of data" {
			t.Fatalf("a panicking draw: %d, %v, %v; want -1, an error, the panic kept", i, p.Err(), p.pan)
		}
	})
}
