package coverage

import (
	"math/rand/v2"
	"testing"

	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/traces"
)

// Run's random strategy on the engine runs the current goroutine on
// between events, switching one time in sparseSwitch; after an event, and
// among a select's cases, it draws uniformly.
func TestSparseRandom(t *testing.T) {
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
