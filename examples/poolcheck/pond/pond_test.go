// Package pond checks github.com/alitto/pond/v2 with execspec's pool
// properties through an adapter that uses only its documented API (see
// ../README.md for the versions and the bugs).
package pond

import (
	"context"
	"testing"

	"github.com/alitto/pond/v2"

	"github.com/execspec/execspec/properties/pool"
)

// newPond adapts a pond v2 pool: Go as Submit, Resize, StopAndWait as
// Close, and the cancellation of the context given with WithContext as
// Cancel; the drawn options set the concurrency, the queue size and
// nonblocking mode (a full queue refuses).
func newPond(o pool.Options) pool.Pool {
	ctx, cancel := context.WithCancel(context.Background())
	opts := []pond.Option{pond.WithContext(ctx)}
	if o.QueueBound > 0 {
		opts = append(opts, pond.WithQueueSize(o.QueueBound))
	}
	if o.Nonblocking {
		opts = append(opts, pond.WithNonBlocking(true))
	}
	p := pond.NewPool(o.Capacity, opts...)
	return &pool.Adapter{
		SubmitFunc: p.Go,
		ResizeFunc: p.Resize,
		CancelFunc: cancel,
		CloseFunc:  func() error { p.StopAndWait(); cancel(); return nil },
	}
}

var pondConfig = pool.Config{
	Space: pool.Space{
		Capacity:     [2]int{1, 4},
		QueueBound:   [2]int{0, 8},
		Nonblocking:  true,
		QueueRefuses: true,
	},
	Panics: pool.PanicsRecovered,
	Goexit: true,
}

var pondLib = pool.Library{Module: "github.com/alitto/pond/v2", Func: pond.NewPool}

func TestPond(t *testing.T) {
	pondLib.Check(t, pool.Target{New: newPond, Config: pondConfig})
}

// TestPondWithoutGoexit leaves out runtime.Goexit, the trigger of pond
// issue #135 (fixed in v2.7.1), whose hangs would otherwise take most of
// the cases at v2.5.0, so that the run reaches Resize, Cancel and the
// bounded queue.
func TestPondWithoutGoexit(t *testing.T) {
	cfg := pondConfig
	cfg.Goexit = false
	pondLib.Check(t, pool.Target{New: newPond, Config: cfg})
}
