// Package errgroup checks golang.org/x/sync/errgroup with execspec's pool
// properties through an adapter that uses only its documented API (see
// ../README.md for the versions and the bugs).
package errgroup

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/execspec/execspec/properties/pool"
)

// cases is the number of cases per check: POOLCHECK_CASES, default 100.
func cases() int {
	if n, err := strconv.Atoi(os.Getenv("POOLCHECK_CASES")); err == nil && n > 0 {
		return n
	}
	return 100
}

// seed seeds the drawn cases: POOLCHECK_SEED, default 1; other seeds draw
// other cases (for long runs in several parts).
func seed() uint64 {
	if n, err := strconv.ParseUint(os.Getenv("POOLCHECK_SEED"), 10, 64); err == nil {
		return n
	}
	return 0
}

// newErrgroup adapts an errgroup.Group with SetLimit: Go as SubmitErr,
// Wait as Close; Wait returns the first error.
func newErrgroup(o pool.Options) pool.Pool {
	var g errgroup.Group
	g.SetLimit(o.Capacity)
	return &pool.Adapter{
		SubmitFunc:    func(f func()) error { g.Go(func() error { f(); return nil }); return nil },
		SubmitErrFunc: func(f func() error) error { g.Go(f); return nil },
		CloseFunc:     g.Wait,
	}
}

var errgroupConfig = pool.Config{
	Space:  pool.Space{Capacity: [2]int{1, 4}},
	Errors: pool.ErrorsFirst,
}

func TestErrgroup(t *testing.T) {
	cfg := errgroupConfig
	cfg.Cases = cases()
	cfg.Seed = seed()
	pool.CheckOptions(t, newErrgroup, cfg)
}
