package rtstd

import (
	mathrand "math/rand"
	"sync"
	"time"

	"github.com/execspec/execspec/instrument/rt"
)

// Rand returns the source of math/rand's top-level functions in
// instrumented code (the rewriter's rand rule): for a controlled
// goroutine, a source of the run seeded with a constant, so that a
// replay draws the same numbers (the variety comes from the schedules);
// for any other goroutine, a shared source seeded from the clock, safe
// for concurrent use, as math/rand's.
func Rand() *mathrand.Rand {
	h, ok := rt.Holding()
	if !ok {
		return freeRand
	}
	if runRand.gen != h.Run() {
		runRand.gen, runRand.r = h.Run(), mathrand.New(mathrand.NewSource(0x5eed))
	}
	return runRand.r
}

// runRand is the source of the run numbered gen, made at its first
// Rand. Only the goroutine holding control touches it (each handover of
// control orders memory, and runs follow one another).
var runRand struct {
	gen uint64
	r   *mathrand.Rand
}

var freeRand = mathrand.New(&lockedSource{src: mathrand.NewSource(time.Now().UnixNano()).(mathrand.Source64)})

type lockedSource struct {
	mu  sync.Mutex
	src mathrand.Source64
}

func (s *lockedSource) Int63() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Int63()
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Uint64()
}

func (s *lockedSource) Seed(seed int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.src.Seed(seed)
}
