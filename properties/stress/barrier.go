package stress

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Barrier makes a fixed number of goroutines start together: each calls
// Wait, and none returns before all have arrived. Waiting spins (so the
// parties leave within a few hundred nanoseconds of each other, which a
// channel or sync.Cond wake-up cannot give), calls runtime.Gosched every
// few hundred spins (so it also works with more parties than GOMAXPROCS),
// and gives up after the limit.
//
// A Barrier is reusable: once all parties have passed, it is ready for the
// next round. If a party gives up, the Barrier is broken: every Wait, now
// and later, returns false at once. Safe for concurrent use by its parties.
// The zero Barrier is not usable; call NewBarrier.
type Barrier struct {
	parties int32
	limit   time.Duration
	arrived atomic.Int32
	round   atomic.Uint32
	broken  atomic.Bool
}

// NewBarrier returns a Barrier for parties goroutines that gives up after
// limit (a limit ≤ 0 means one second).
func NewBarrier(parties int, limit time.Duration) *Barrier {
	if limit <= 0 {
		limit = time.Second
	}
	return &Barrier{parties: int32(max(parties, 1)), limit: limit}
}

// Wait spins until every party has arrived in this round and reports true,
// or reports false if the limit passed first or the Barrier is broken.
func (b *Barrier) Wait() bool {
	if b.broken.Load() {
		return false
	}
	round := b.round.Load()
	if b.arrived.Add(1) == b.parties {
		// The last to arrive opens the round; the counter is reset before
		// the round changes, so that no party of the next round counts
		// into this one.
		b.arrived.Store(0)
		b.round.Add(1)
		return true
	}
	var deadline time.Time
	for spins := 1; ; spins++ {
		if b.round.Load() != round {
			return true
		}
		if b.broken.Load() {
			return false
		}
		if spins%256 == 0 {
			runtime.Gosched()
			if deadline.IsZero() {
				deadline = time.Now().Add(b.limit)
			} else if time.Now().After(deadline) {
				b.broken.Store(true)
				return false
			}
		}
	}
}

// Broken reports whether a party gave up.
func (b *Barrier) Broken() bool { return b.broken.Load() }
