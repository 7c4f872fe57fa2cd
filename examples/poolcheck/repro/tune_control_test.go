package repro

import (
	"os"
	"testing"
	"time"

	"github.com/panjf2000/ants/v2"
)

// TestTuneGrow is the lost wakeup of TestTuneGrowLostWakeup as one
// ordinary trial: a pool of one held worker, a second Submit blocked,
// Tune(2). Run freely it passes all but a few times in 100,000; under
// controlled schedules (`verify test`, which rewrites ants so that its
// goroutines, locks, condition variable and atomics pass through a
// scheduler) it fails within a few hundred runs and replays exactly:
//
//	../../../verify test . --instrument github.com/panjf2000/ants/v2/... --run '^TestTuneGrow$' --runs 2000
//
// It is skipped in plain `go test` runs (set POOLCHECK_REPRO=1 to run it
// freely): one trial finds nothing and waits for nothing.
func TestTuneGrow(t *testing.T) {
	if os.Getenv("POOLCHECK_REPRO") == "" && os.Getenv("EXECSPEC_RUNS") == "" {
		t.Skip("set POOLCHECK_REPRO=1, or run it under verify test")
	}
	p, err := ants.NewPool(1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	release := make(chan struct{})
	if err := p.Submit(func() { <-release }); err != nil {
		t.Fatal(err)
	}
	ran := make(chan struct{})
	go func() { _ = p.Submit(func() { close(ran) }) }()
	for p.Waiting() == 0 {
		time.Sleep(time.Microsecond)
	}
	p.Tune(2)
	select {
	case <-ran:
	case <-time.After(time.Second):
		t.Errorf("Submit still blocked 1s after Tune(2): Cap()=%d, Running()=%d, Waiting()=%d", p.Cap(), p.Running(), p.Waiting())
	}
	close(release)
}
