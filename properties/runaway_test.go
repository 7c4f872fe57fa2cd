package properties_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
)

// TestRunawayStopped: an executor that re-polls every finished future in a
// loop without end is caught, and stopped: its polls are cut off after the
// case, so the process's memory stays bounded (it grew by gigabytes a
// second before the cut-off) and the spinning goroutines end up parked.
func TestRunawayStopped(t *testing.T) {
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	n := 30
	if raceEnabled {
		n = 10
	}
	rep := properties.Check(broken.Runaway, properties.Config{Checks: n, ShrinkTime: time.Second, Idle: 200 * time.Millisecond, Only: []string{"exactly-once", "no-poll-after-ready", "liveness"}})
	if rep.Verdict() != checker.Violated {
		t.Fatalf("the runaway executor was not caught: %v", rep.Err())
	}
	caught := false
	for _, r := range rep.Results {
		caught = caught || r.Caught == "no-poll-after-ready"
	}
	if !caught {
		t.Fatalf("the runaway executor was not caught as polling after Ready: %v", rep.Err())
	}
	// Let any goroutine still between its last poll and the cut-off reach
	// it, then see that the memory no longer grows.
	time.Sleep(100 * time.Millisecond)
	var mid, after runtime.MemStats
	runtime.ReadMemStats(&mid)
	time.Sleep(300 * time.Millisecond)
	runtime.ReadMemStats(&after)
	const limit = 500 << 20
	t.Logf("runaway: %v; heap in use %d MB before, %d MB after, Sys %d MB; goroutines %d before, %d after (parked at the cut-off)",
		rep.Duration.Round(time.Millisecond), before.HeapInuse>>20, after.HeapInuse>>20, after.Sys>>20, g0, runtime.NumGoroutine())
	if after.Sys > limit {
		t.Errorf("the process obtained %d MB from the system, more than %d MB", after.Sys>>20, limit>>20)
	}
	if grew := int64(after.TotalAlloc) - int64(mid.TotalAlloc); grew > 64<<20 {
		t.Errorf("%d MB allocated in 300ms after the run: the runaway executor still runs and is still recorded", grew>>20)
	}
}
