// Package errgroup checks golang.org/x/sync/errgroup with execspec's pool
// properties through an adapter that uses only its documented API (see
// ../README.md for the versions and the bugs).
package errgroup

import (
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/execspec/execspec/properties/pool"
)

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
	pool.Library{Module: "golang.org/x/sync", Func: errgroup.WithContext}.Check(t, pool.Target{New: newErrgroup, Config: errgroupConfig})
}
