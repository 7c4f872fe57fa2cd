// Package pond21 checks github.com/alitto/pond/v2 through the API it has
// had since v2.1 (NewPool with a context, Go, StopAndWait), so that older
// v2 releases are checked too (see ../README.md for the versions and the
// bugs).
package pond21

import (
	"context"
	"testing"

	"github.com/alitto/pond/v2"

	"github.com/execspec/execspec/properties/pool"
)

// newPond adapts a pond v2 pool: Go as Submit, StopAndWait as Close, the
// cancellation of the context given with WithContext as Cancel.
func newPond(o pool.Options) pool.Pool {
	ctx, cancel := context.WithCancel(context.Background())
	p := pond.NewPool(o.Capacity, pond.WithContext(ctx))
	return &pool.Adapter{
		SubmitFunc: p.Go,
		CancelFunc: cancel,
		CloseFunc:  func() error { p.StopAndWait(); cancel(); return nil },
	}
}

// pondCloseConfig draws pools of one to three workers with Close racing
// the submitters (each task then either accepted, and run, or refused);
// no runtime.Goexit (pond issue #135, a hang of its own before v2.7.0).
var pondCloseConfig = pool.Config{
	Space:      pool.Space{Capacity: [2]int{1, 3}},
	Panics:     pool.PanicsRecovered,
	CloseEarly: true,
}

var pondLib = pool.Library{Module: "github.com/alitto/pond/v2", Func: pond.NewPool}

// TestPondClose checks Close racing submitters.
func TestPondClose(t *testing.T) {
	pondLib.Check(t, pool.Target{New: newPond, Config: pondCloseConfig})
}
