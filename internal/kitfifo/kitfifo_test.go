package kitfifo_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/internal/kitfifo"
	"github.com/execspec/execspec/traces"
)

// TestQueueFIFO: one worker polls the tasks in the order they were
// spawned, and a task woken during its poll comes back behind the others,
// marked or not; the marked queue's trace has a push and a take for each.
func TestQueueFIFO(t *testing.T) {
	for _, marked := range []bool{false, true} {
		var log traces.Log
		q := &kitfifo.Queue{Marked: marked}
		cfg := executor.KitConfig{Workers: 1, Schedule: q.Push, Work: q.Work}
		if marked {
			cfg.Recorder = &log
		}
		q.Kit = executor.NewKit(cfg)
		var mu sync.Mutex
		var order []int
		const n = 5
		for i := range n {
			polls := 0
			_, err := q.Kit.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				polls++
				if i == 0 && polls == 1 {
					cx.Waker().Wake() // NOTIFIED: queued again, behind the others
					return nil, false
				}
				return i, true
			}))
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := q.Kit.Close(); err != nil {
			t.Fatal(err)
		}
		// The worker starts at the first spawn, so task 0's second poll
		// may come anywhere after its first; without it, the polls are in
		// spawn order.
		var rest []int
		zeros := 0
		for _, v := range order {
			if v == 0 {
				if zeros++; zeros == 2 {
					continue
				}
			}
			rest = append(rest, v)
		}
		if zeros != 2 || !slices.Equal(rest, []int{0, 1, 2, 3, 4}) {
			t.Errorf("marked %v: polls %v, want 0 to 4 in order and task 0 once more", marked, order)
		}
		if marked {
			pushes, takes := 0, 0
			for _, e := range log.Events() {
				switch e.Kind {
				case traces.KindSpawn, traces.KindRequeue:
					pushes++
				case traces.KindTake:
					takes++
				}
			}
			if pushes != n+1 || takes != n+1 {
				t.Errorf("marked: %d pushes and %d takes recorded, want %d of each", pushes, takes, n+1)
			}
		}
	}
}
