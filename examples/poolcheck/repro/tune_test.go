// Package repro reproduces, with ants' public API only, a lost wakeup in
// ants' Pool.Tune: Tune stores the new capacity and signals the callers
// blocked in Submit without holding the pool's lock, so a caller that has
// just read the old capacity under the lock, and not yet parked in
// cond.Wait, misses the signal and stays blocked although the pool now
// has room for it.
//
//	POOLCHECK_REPRO=1 go test -run TuneGrowLostWakeup -v .
package repro

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/panjf2000/ants/v2"
)

func TestTuneGrowLostWakeup(t *testing.T) {
	if os.Getenv("POOLCHECK_REPRO") == "" {
		t.Skip("set POOLCHECK_REPRO=1")
	}
	trials := 200000
	if n, err := strconv.Atoi(os.Getenv("POOLCHECK_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	start := time.Now()
	lost := 0
	for i := range trials {
		p, err := ants.NewPool(1)
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		// The one worker is busy until the test lets it go.
		if err := p.Submit(func() { <-release }); err != nil {
			t.Fatal(err)
		}
		ran := make(chan struct{})
		go func() {
			// Blocks: the pool is full.
			_ = p.Submit(func() { close(ran) })
		}()
		// Grow as the submitter is about to park: Waiting is counted
		// just before cond.Wait, after the capacity was read.
		for p.Waiting() == 0 {
			if i%2 == 0 {
				runtime.Gosched()
			}
		}
		p.Tune(2)
		select {
		case <-ran:
		case <-time.After(time.Second):
			lost++
			if lost == 1 {
				t.Logf("trial %d: Submit still blocked 1s after Tune(2) on a pool with Cap()=%d, Running()=%d, Waiting()=%d", i, p.Cap(), p.Running(), p.Waiting())
			}
		}
		close(release)
		<-ran
		p.Release()
	}
	t.Logf("ants: %d of %d trials lost the wakeup, in %v", lost, trials, time.Since(start).Round(time.Millisecond))
	if lost > 0 {
		t.Errorf("Tune(2) left a submitter blocked with room for it in %d of %d trials", lost, trials)
	}
}
