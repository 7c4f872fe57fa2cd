package pond

import (
	"context"
	"testing"

	"github.com/alitto/pond/v2"

	"github.com/execspec/execspec/properties/pool"
)

// newPondGroup adapts a task group of a pond v2 pool (pool.NewGroup, as
// pond's documentation submits a group of related tasks): the group's
// Submit, Close as the group's Wait and then the pool's StopAndWait, and
// the cancellation of the pool's context (WithContext) as Cancel.
//
// Tasks do not return errors here: pond documents that at a group's first
// error (a task's panic is one) the tasks still queued are aborted, which
// none-lost would report; the group is checked for cancellation.
func newPondGroup(o pool.Options) pool.Pool {
	ctx, cancel := context.WithCancel(context.Background())
	p := pond.NewPool(o.Capacity, pond.WithContext(ctx))
	g := p.NewGroup()
	return &pool.Adapter{
		SubmitFunc: func(f func()) error { g.Submit(f); return nil },
		CancelFunc: cancel,
		CloseFunc: func() error {
			err := g.Wait()
			p.StopAndWait()
			cancel()
			return err
		},
	}
}

// pondGroupConfig draws no panics (an error of the group, see above) and
// no runtime.Goexit, the trigger of pond issue #135 (a hang of its own at
// v2.5.0), so that the run reaches Cancel.
var pondGroupConfig = pool.Config{
	Space:  pool.Space{Capacity: [2]int{1, 4}},
	Panics: pool.PanicsCrash,
}

// TestPondGroup finds pond issue #138 at v2.5.0: after the pool's context
// is cancelled, its workers exit without the tasks still queued, so the
// group's Wait never returns (cancel-stops). v2.7.0 resolves those tasks
// with ErrContextCanceled.
func TestPondGroup(t *testing.T) {
	pondLib.Check(t, pool.Target{New: newPondGroup, Config: pondGroupConfig})
}
