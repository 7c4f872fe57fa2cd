package stress

import (
	"fmt"
	"math/rand/v2"
	"runtime"
)

// Yielder calls runtime.Gosched with a fixed probability at each Maybe, to
// move the Go scheduler's preemptions to the points a test chooses. It is a
// value; copies behave the same. Safe for concurrent use (it draws from the
// runtime's per-thread random source). The zero Yielder never yields.
type Yielder struct{ threshold uint32 }

// NewYielder returns a Yielder that yields with probability p (clamped to
// [0, 1]).
func NewYielder(p float64) Yielder {
	switch {
	case p <= 0:
		return Yielder{}
	case p >= 1:
		return Yielder{threshold: 1<<32 - 1}
	}
	return Yielder{threshold: uint32(p * (1 << 32))}
}

// Maybe yields with the Yielder's probability and reports whether it did.
func (y Yielder) Maybe() bool {
	if y.threshold == 0 {
		return false
	}
	if y.threshold == 1<<32-1 || rand.Uint32() < y.threshold {
		runtime.Gosched()
		return true
	}
	return false
}

// Repeat calls fn(0), fn(1), … fn(n-1), stopping at the first error, which
// it returns wrapped with the repetition that failed. Each repetition
// should build fresh state: a stress test is many independent runs, the
// same check each time.
func Repeat(n int, fn func(i int) error) error {
	for i := range n {
		if err := fn(i); err != nil {
			return fmt.Errorf("stress: repetition %d of %d: %w", i+1, n, err)
		}
	}
	return nil
}

// RepeatAll is Repeat that runs every repetition and counts the failures,
// for measuring how often a race shows (a detection rate) rather than
// stopping at the first. It returns the number of failed repetitions and
// the first error.
func RepeatAll(n int, fn func(i int) error) (failed int, first error) {
	for i := range n {
		if err := fn(i); err != nil {
			if first == nil {
				first = fmt.Errorf("stress: repetition %d of %d: %w", i+1, n, err)
			}
			failed++
		}
	}
	return failed, first
}
