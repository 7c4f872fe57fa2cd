// Package conc checks github.com/sourcegraph/conc/pool with execspec's pool
// properties through an adapter that uses only its documented API (see
// ../README.md for the versions and the bugs).
package conc

import (
	"context"
	"testing"

	concpool "github.com/sourcegraph/conc/pool"

	"github.com/execspec/execspec/properties/pool"
)

// newConc adapts a conc error pool with a goroutine limit: Go as
// SubmitErr (and Submit), Wait as Wait and Close. conc documents that
// Wait re-panics with a task's panic, and pools are meant to be reusable
// like sync.WaitGroup. Wait returns every task error, joined.
func newConc(o pool.Options) pool.Pool {
	return concAdapter(concpool.New().WithErrors().WithMaxGoroutines(o.Capacity))
}

// newConcFirst is newConc configured WithFirstError: Wait returns only
// the first error a task returned.
func newConcFirst(o pool.Options) pool.Pool {
	return concAdapter(concpool.New().WithErrors().WithFirstError().WithMaxGoroutines(o.Capacity))
}

// newConcContext adapts a conc context pool WithCancelOnError and
// WithFirstError, as conc's documentation pairs them: the first task
// error cancels the context the tasks get (the generated tasks ignore
// it) and Wait returns that error.
func newConcContext(o pool.Options) pool.Pool {
	p := concpool.New().WithContext(context.Background()).WithCancelOnError().WithFirstError().WithMaxGoroutines(o.Capacity)
	return &pool.Adapter{
		SubmitFunc: func(f func()) error {
			p.Go(func(context.Context) error { f(); return nil })
			return nil
		},
		SubmitErrFunc: func(f func() error) error {
			p.Go(func(context.Context) error { return f() })
			return nil
		},
		WaitFunc:  p.Wait,
		CloseFunc: p.Wait,
	}
}

func concAdapter(p *concpool.ErrorPool) pool.Pool {
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

// TestConc checks the error pool (every error joined); TestConcFirstError
// the error pool and the context pool that return the first error only.
var concLib = pool.Library{Module: "github.com/sourcegraph/conc", Func: concpool.New}

func TestConc(t *testing.T) {
	concLib.Check(t, pool.Target{New: newConc, Config: concConfig})
}

func TestConcFirstError(t *testing.T) {
	first := concConfig
	first.Errors = pool.ErrorsFirst
	concLib.Check(t,
		pool.Target{Name: "ErrorPool", New: newConcFirst, Config: first},
		pool.Target{Name: "ContextPool", New: newConcContext, Config: first})
}
