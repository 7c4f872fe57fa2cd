package goid

import (
	"sync"
	"testing"
)

// TestCurg: a goroutine gets the same nonzero number at every call, and
// goroutines alive at the same time get different numbers.
func TestCurg(t *testing.T) {
	const n = 16
	ids := make([]uintptr, n)
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	var done sync.WaitGroup
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			ids[i] = Curg()
			if again := Curg(); again != ids[i] {
				t.Errorf("goroutine %d: %#x, then %#x", i, ids[i], again)
			}
			started.Done()
			release.Wait() // every goroutine is alive until all have read theirs
		}()
	}
	started.Wait()
	release.Done()
	done.Wait()
	seen := map[uintptr]int{Curg(): -1}
	for i, id := range ids {
		if id == 0 {
			t.Errorf("goroutine %d: 0", i)
		}
		if j, ok := seen[id]; ok {
			t.Errorf("goroutines %d and %d, alive at once, share %#x", j, i, id)
		}
		seen[id] = i
	}
}
