package properties

import (
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/traces"
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
		s := &rapidStrategy{s: fixed(1), t: rt}
		if i := s.Choose(control.Decision{Current: 0, CurrentRunnable: true, Runnable: []int{0, 3, 5}}); i != 1 {
			t.Fatalf("a choice among goroutines: %d, want the wrapped strategy's 1", i)
		}
		if i := s.Choose(control.Decision{Current: 2, CurrentRunnable: true, Runnable: []int{2, 2, 2}}); i < 0 || i > 2 {
			t.Fatalf("a select's case: %d, want one of 0..2", i)
		}
		if s.Err() != nil {
			t.Fatalf("Err after good choices: %v", s.Err())
		}
		p := &rapidStrategy{s: panicky{}, t: rt}
		if i := p.Choose(control.Decision{Current: 0, Runnable: []int{0, 1}}); i != -1 || p.Err() == nil || !p.panicked || p.pan != "out of data" {
			t.Fatalf("a panicking draw: %d, %v, %v; want -1, an error, the panic kept", i, p.Err(), p.pan)
		}
	})
}

// Cover's random strategy on the engine runs the current goroutine on
// between events, switching one time in sparseSwitch; after an event, and
// among a select's cases, it draws uniformly.
func TestCoverSparseRandom(t *testing.T) {
	s := &sparseRandom{rng: rand.New(rand.NewPCG(1, 2))}
	d := control.Decision{Current: 3, CurrentRunnable: true, Runnable: []int{3, 1, 2, 4}}
	const n = 64_000
	count := func(before func()) int {
		other := 0
		for range n {
			before()
			if s.Choose(d) != 0 {
				other++
			}
		}
		return other
	}
	// Between events: about n/sparseSwitch draws, 3 in 4 of them another goroutine.
	if got, want := count(func() {}), n/sparseSwitch*3/4; got < want/2 || got > want*2 {
		t.Errorf("between events: %d of %d decisions switched, want about %d", got, n, want)
	}
	if got, want := count(func() { s.observe(traces.Event{}) }), n*3/4; got < want*9/10 || got > want*11/10 {
		t.Errorf("after an event: %d of %d decisions switched, want about %d", got, n, want)
	}
	d.Runnable = []int{3, 3, 3}
	if got, want := count(func() {}), n*2/3; got < want*9/10 || got > want*11/10 {
		t.Errorf("a select's cases: %d of %d draws not the first, want about %d", got, n, want)
	}
	d.CurrentRunnable, d.Runnable = false, []int{1, 2}
	if got, want := count(func() {}), n/2; got < want*9/10 || got > want*11/10 {
		t.Errorf("the current goroutine blocked: %d of %d draws not the first, want about %d", got, n, want)
	}
}
