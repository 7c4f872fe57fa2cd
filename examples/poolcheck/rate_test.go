package poolcheck

import (
	"os"
	"testing"

	"github.com/execspec/execspec/properties/pool"
)

// TestAntsDetectionRate measures how often one run of the targeted
// workload shows the capacity race, with submitters pinned to distinct
// CPUs and not. It takes a while, so it runs only with POOLCHECK_RATES=1:
//
//	POOLCHECK_RATES=1 go test -modfile=go.buggy.mod -run DetectionRate -v .
func TestAntsDetectionRate(t *testing.T) {
	if os.Getenv("POOLCHECK_RATES") == "" {
		t.Skip("set POOLCHECK_RATES=1 to measure detection rates")
	}
	const runs = 500
	for _, pin := range []bool{false, true} {
		for _, subs := range []int{2, 4, 8} {
			w := pool.Workload{Submitters: subs}
			for range 2 * subs {
				w.Tasks = append(w.Tasks, pool.Task{Work: pool.WorkSleep, Amount: 300})
			}
			fails := 0
			for range runs {
				if pool.RunWorkload(newAnts(2), w, pool.Config{Capacity: 2, Pin: pin}) != nil {
					fails++
				}
			}
			t.Logf("pinned %-5v %d submitters: capacity exceeded in %3d of %d runs (%.1f%%)", pin, subs, fails, runs, 100*float64(fails)/runs)
		}
	}
}
