// Package conc checks github.com/sourcegraph/conc/pool with execspec's pool
// properties through an adapter that uses only its documented API (see
// ../README.md for the versions and the bugs).
package conc

import (
	"os"
	"strconv"
	"testing"

	concpool "github.com/sourcegraph/conc/pool"

	"github.com/execspec/execspec/properties/pool"
)

// cases is the number of cases per check: POOLCHECK_CASES, default 100.
func cases() int {
	if n, err := strconv.Atoi(os.Getenv("POOLCHECK_CASES")); err == nil && n > 0 {
		return n
	}
	return 100
}

// newConc adapts a conc error pool with a goroutine limit: Go as
// SubmitErr (and Submit), Wait as Wait and Close. conc documents that
// Wait re-panics with a task's panic, and pools are meant to be reusable
// like sync.WaitGroup.
func newConc(o pool.Options) pool.Pool {
	p := concpool.New().WithErrors().WithMaxGoroutines(o.Capacity)
	return &pool.Adapter{
		SubmitFunc:    func(f func()) error { p.Go(func() error { f(); return nil }); return nil },
		SubmitErrFunc: func(f func() error) error { p.Go(f); return nil },
		WaitFunc:      p.Wait,
		CloseFunc:     p.Wait,
	}
}

var concConfig = pool.Config{
	Space:  pool.Space{Capacity: [2]int{1, 4}},
	Panics: pool.PanicsPropagated,
	Errors: pool.ErrorsAll,
}

func TestConc(t *testing.T) {
	cfg := concConfig
	cfg.Cases = cases()
	pool.CheckOptions(t, newConc, cfg)
}
