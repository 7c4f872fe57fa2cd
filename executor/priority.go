package executor

import "github.com/execspec/execspec/traces"

// PriorityConfig configures a Priority executor. The zero value works.
type PriorityConfig struct {
	// Workers is the number of workers; 0 means 1.
	Workers int
	// Aging is how many later pushes it takes for a waiting task to gain
	// one priority level over them; 0 means 4.
	Aging int
	// MaxPriority is the highest priority; priorities are clamped to
	// [0, MaxPriority]. 0 means 7.
	MaxPriority int
}

// Priority is an executor with one priority queue and aging: higher
// priority runs first, but a task waiting in the queue gains one level per
// Aging later pushes, so no task starves. Equal effective priorities run in
// push order. Spawn uses priority 0.
//
// Aging costs nothing per step: a task pushed as the e-th push with
// priority p is ordered by p·Aging − e, because every waiting task ages at
// the same rate. It follows the model's "priority" policy with aging.
//
// Create it with NewPriority; the zero Priority is not usable. Safe for
// concurrent use. Cost per push and pop: O(log n) in the queued tasks.
type Priority struct {
	shared
	aging, maxp int
}

// NewPriority returns a Priority executor.
func NewPriority(c PriorityConfig) *Priority {
	if c.Aging <= 0 {
		c.Aging = 4
	}
	if c.MaxPriority <= 0 {
		c.MaxPriority = 7
	}
	e := &Priority{aging: c.Aging, maxp: c.MaxPriority}
	e.initShared(c.Workers, &prioq{aging: int64(c.Aging)})
	return e
}

// Spawn implements Executor, with priority 0.
func (e *Priority) Spawn(f Future) (Handle, error) { return e.spawn(f, 0, nil, 0) }

// SpawnPriority implements Prioritized: higher runs first; priority is
// clamped to [0, MaxPriority]. The task keeps its priority for its life.
func (e *Priority) SpawnPriority(f Future, priority int) (Handle, error) {
	return e.spawn(f, min(max(priority, 0), e.maxp), nil, 0)
}

// Describe implements Describer: policy "priority", config "aging" and
// "max-priority".
func (e *Priority) Describe() traces.Header {
	return header("priority", e.nworkers, "priority", map[string]int{"aging": e.aging, "max-priority": e.maxp})
}

// FairnessBound implements Bounded. Between a task's push and its poll, the
// polls of other tasks are those of the n-1 others queued ahead of it, of
// the later pushes that outrank it (at most MaxPriority·Aging of them: after
// that many pushes the task outranks any newcomer), and of tasks that other
// workers had taken but not yet begun to poll (W-1).
func (e *Priority) FairnessBound(n int) int {
	return max(n-1, 0) + e.maxp*e.aging + e.nworkers - 1
}

// prioq is a binary heap of tasks ordered by aged priority: t.key holds the
// task's priority and t.stamp the number of its push, so the effective
// priority is key·aging − stamp; ties go to the earlier push.
type prioq struct {
	aging  int64
	pushes int64
	h      []*task
}

func (q *prioq) less(a, b *task) bool { // a runs before b
	ka, kb := a.key*q.aging-a.stamp, b.key*q.aging-b.stamp
	if ka != kb {
		return ka > kb
	}
	return a.stamp < b.stamp
}

func (q *prioq) push(t *task) {
	q.pushes++
	t.stamp = q.pushes
	t.index = len(q.h)
	q.h = append(q.h, t)
	q.up(t.index)
}

func (q *prioq) pop() *task {
	n := len(q.h)
	if n == 0 {
		return nil
	}
	t := q.h[0]
	q.h[0] = q.h[n-1]
	q.h[0].index = 0
	q.h[n-1] = nil
	q.h = q.h[:n-1]
	if len(q.h) > 0 {
		q.down(0)
	}
	t.index = -1
	return t
}

func (q *prioq) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(q.h[i], q.h[p]) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *prioq) down(i int) {
	n := len(q.h)
	for {
		l, best := 2*i+1, i
		if l < n && q.less(q.h[l], q.h[best]) {
			best = l
		}
		if r := l + 1; r < n && q.less(q.h[r], q.h[best]) {
			best = r
		}
		if best == i {
			return
		}
		q.swap(i, best)
		i = best
	}
}

func (q *prioq) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].index, q.h[j].index = i, j
}
