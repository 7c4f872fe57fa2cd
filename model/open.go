package model

import "fmt"

// Limits of the open model built by NewOpenTrace. The closed model's limits
// (MaxWorkers, local capacity 15) come from its packed state, which the open
// model never builds; what remains are the per-worker counters that are
// bytes (GlobalInterval, Slice) and the victim of a two-step steal.
const (
	MaxOpenWorkers  = 1 << 16
	MaxOpenLocalCap = 1 << 24
)

// NewOpenTrace returns the open model of c, like NewOpen, but accepts the
// sizes of real executors: up to MaxOpenWorkers workers and local queues of
// up to MaxOpenLocalCap tasks. The other parameters are validated as Validate
// does. Use it to check a recorded trace; a model built by it is not for
// exploration (its state is never packed).
func NewOpenTrace(c Config) (*Model, error) {
	small := c
	if small.Workers > MaxWorkers {
		small.Workers = MaxWorkers
	}
	if small.LocalCap > 15 {
		small.LocalCap = 15
	}
	m, err := NewOpen(small)
	if err != nil {
		return nil, err
	}
	if c.Workers > MaxOpenWorkers {
		return nil, fmt.Errorf("workers = %d: want 1..%d", c.Workers, MaxOpenWorkers)
	}
	if c.LocalCap > MaxOpenLocalCap {
		return nil, fmt.Errorf("local-cap = %d: want 0..%d", c.LocalCap, MaxOpenLocalCap)
	}
	if c.Variant == StealOwnerEnd && c.Workers > 127 {
		return nil, fmt.Errorf("variant %s: at most 127 workers", c.Variant)
	}
	if c.Workers > MaxWorkers {
		m.cfg.Workers = c.Workers
	}
	if m.cfg.LocalCap > 0 && c.LocalCap > 15 {
		m.cfg.LocalCap = c.LocalCap
	}
	return m, nil
}
