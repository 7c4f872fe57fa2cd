package picture

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/execspec/execspec/traces"
)

// tasks lists the queue's tasks, head first.
func (q *tlQ) tasks() []int64 {
	var out []int64
	for i := q.first(0); i < len(q.items); i = q.first(i + 1) {
		out = append(out, q.items[i])
	}
	return out
}

// The timeline's queues against the plain slices they replace: random
// pushes (tasks queued twice included, as a wrong trace may say) and
// removals from anywhere, through compactions; after each step every
// queue holds the same tasks in the same order and shows the same head.
func TestTimelineQueuesMatchSlices(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 1))
		s := newTLState(traces.Header{Workers: 3, Policy: "worksteal"})
		ref := make([][]int64, 4) // 0: global, 1+w: local w
		refRemove := func(task int64) {
			for q := range ref {
				if i := slices.Index(ref[q], task); i >= 0 {
					ref[q] = slices.Delete(ref[q], i, i+1)
					return
				}
			}
		}
		tasks := int64(5 + r.IntN(300))
		for step := range 5000 {
			task := 1 + r.Int64N(tasks)
			if r.IntN(2) == 0 {
				q := r.IntN(4) - 1
				s.push(q, task)
				ref[q+1] = append(ref[q+1], task)
			} else {
				s.remove(task)
				refRemove(task)
			}
			for q := -1; q < 3; q++ {
				qu := s.queue(q)
				if got, want := qu.tasks(), ref[q+1]; !slices.Equal(got, want) || qu.n != len(want) {
					t.Fatalf("seed %d step %d: queue %d holds %v (n %d), want %v", seed, step, q, got, qu.n, want)
				}
				sh := qu.shown()
				if want := ref[q+1][:min(len(ref[q+1]), tlQueueShown)]; sh.N != len(ref[q+1]) || !slices.Equal(sh.H, want) {
					t.Fatalf("seed %d step %d: queue %d shown as %v, want %v", seed, step, q, sh, want)
				}
			}
		}
	}
}

// A queue's memory follows the tasks queued: a million pushes and takes
// through one queue that never holds more than a few tasks leave it
// small.
func TestTimelineQueueMemoryFollowsTasks(t *testing.T) {
	s := newTLState(traces.Header{Workers: 1, Policy: "worksteal"})
	for task := int64(1); task <= 1_000_000; task++ {
		s.push(-1, task)
		if task > 3 {
			s.remove(task - 3 + task%3) // from the middle too
		}
	}
	if n := len(s.global.items); n > 1000 {
		t.Errorf("the global queue keeps %d places for %d tasks queued", n, s.global.n)
	}
}
