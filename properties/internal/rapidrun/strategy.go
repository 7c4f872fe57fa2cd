package rapidrun

import (
	"errors"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/properties/control"
)

// Strategy is the strategy of a case on the engine: it chooses among
// goroutines with s, and among the ready cases of a select (a decision
// whose every candidate is the current goroutine) with a draw of its own,
// so that PCT, which orders goroutines, does not always take the first.
// A panic of a draw is kept, the run stopped (Err), and the panic raised
// again on the test's goroutine once the run has unwound.
type Strategy struct {
	s        control.Strategy
	t        *rapid.T
	cases    []*rapid.Generator[int]
	pan      any
	panicked bool
}

// ErrDrawPanicked is Strategy's Err once a draw panicked.
var ErrDrawPanicked = errors.New("properties: a rapid draw stopped the run")

// NewStrategy returns the Strategy that chooses among goroutines with s
// and draws its other choices from t.
func NewStrategy(s control.Strategy, t *rapid.T) *Strategy { return &Strategy{s: s, t: t} }

// Panicked returns the panic of a draw, if one panicked: the caller
// raises it again on the test's goroutine once the run has unwound.
func (r *Strategy) Panicked() (any, bool) { return r.pan, r.panicked }

func (r *Strategy) Choose(d control.Decision) (i int) {
	defer func() {
		if x := recover(); x != nil {
			r.pan, r.panicked, i = x, true, -1
		}
	}()
	if n := len(d.Runnable); n > 1 && d.Runnable[0] == d.Current && d.Runnable[n-1] == d.Current {
		for len(r.cases) <= n {
			r.cases = append(r.cases, nil)
		}
		if r.cases[n] == nil {
			r.cases[n] = rapid.IntRange(0, n-1)
		}
		return r.cases[n].Draw(r.t, "case")
	}
	return r.s.Choose(d)
}

// Err implements the optional Err method of a strategy: why it stopped
// the run.
func (r *Strategy) Err() error {
	if r.panicked {
		return ErrDrawPanicked
	}
	return nil
}
