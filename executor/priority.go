package executor

import "github.com/execspec/execspec/traces"

// PriorityConfig configures a Priority executor. The zero value works.
type PriorityConfig struct {
	// Workers is the number of workers; 0 means 1.
	Workers int
	// Aging is how many takes of other tasks a queued task waits through
	// before it runs ahead of every task that has waited less; 0 means 4,
	// a negative value means no aging (a low-priority task can starve),
	// and more than 255 means 255 (the model's largest).
	Aging int
	// MaxPriority is the highest priority; priorities are clamped to
	// [0, MaxPriority]. 0 means 7; more than traces.MaxPackedExtra means
	// that (the largest priority a packed event holds).
	MaxPriority int
}

// Priority is an executor with one priority queue and aging, the model's
// "priority" policy: a take takes the oldest queued task if it was passed
// over by at least Aging takes of other tasks, and otherwise the task of
// the highest priority, the first queued among equals. So no task starves:
// after Aging takes it is aged, and aged tasks run in the order they were
// queued. Spawn uses priority 0.
//
// Its traces are format v1.1: every spawn, wake and requeue carries the
// task's priority and the header's config declares "aging", so that
// `verify check` checks each take against the model's pick (see
// docs/trace-format.md); Close records a stop.
//
// Aging costs nothing per step: every queued task ages with every take, so
// a task's age is the number of takes since its push, and the first aged
// task, if any, is the oldest one.
//
// Create it with NewPriority; the zero Priority is not usable. Safe for
// concurrent use. Cost per push and pop: O(log n) in the queued tasks.
type Priority struct {
	shared
	aging, maxp int
}

// NewPriority returns a Priority executor.
func NewPriority(c PriorityConfig) *Priority {
	switch {
	case c.Aging == 0:
		c.Aging = 4
	case c.Aging < 0:
		c.Aging = 0
	case c.Aging > 255:
		c.Aging = 255
	}
	if c.MaxPriority <= 0 {
		c.MaxPriority = 7
	}
	c.MaxPriority = min(c.MaxPriority, traces.MaxPackedExtra)
	e := &Priority{aging: c.Aging, maxp: c.MaxPriority}
	e.initShared(c.Workers, &prioq{aging: int64(c.Aging)})
	e.prio, e.stops = true, true
	return e
}

// Spawn implements Executor, with priority 0.
func (e *Priority) Spawn(f Future) (Handle, error) { return e.spawn(f, 0, nil, 0) }

// SpawnPriority implements Prioritized: higher runs first; priority is
// clamped to [0, MaxPriority]. The task keeps its priority for its life.
func (e *Priority) SpawnPriority(f Future, priority int) (Handle, error) {
	return e.spawn(f, min(max(priority, 0), e.maxp), nil, 0)
}

// Describe implements Describer: policy "priority", format v1.1, config
// "aging" (0: none) and "max-priority".
func (e *Priority) Describe() traces.Header {
	h := header("priority", e.nworkers, "priority", map[string]int{"aging": e.aging, "max-priority": e.maxp})
	h.Minor = 1
	return h
}

// FairnessBound implements Bounded. Between a task's push and its poll
// come at most Aging takes before it is aged, then the takes of the tasks
// queued before it (aged before it: at most n-1), and the polls of tasks
// that other workers had taken but not yet begun to poll (W-1). Without
// aging there is no bound (-1).
func (e *Priority) FairnessBound(n int) int {
	if e.aging == 0 {
		return -1
	}
	return max(n-1, 0) + e.aging + e.nworkers - 1
}

// prioq is the priority policy's queue: a binary heap of tasks ordered by
// priority (t.key, higher first), then by push (t.stamp, earlier first),
// and, when aging, the tasks in push order with the count of takes at
// their push, to find the oldest one and its age. Entries of that list are
// removed lazily: one whose task was taken (index -1) or pushed again
// (another stamp) is skipped when it reaches the head.
type prioq struct {
	aging  int64
	pushes int64
	takes  int64
	h      []*task
	order  []pushed // when aging: order[head:] in push order
	head   int
}

type pushed struct {
	t            *task
	stamp, takes int64
}

func (q *prioq) less(a, b *task) bool { // a runs before b
	if a.key != b.key {
		return a.key > b.key
	}
	return a.stamp < b.stamp
}

func (q *prioq) push(t *task) {
	q.pushes++
	t.stamp = q.pushes
	t.index = len(q.h)
	q.h = append(q.h, t)
	q.up(t.index)
	if q.aging > 0 {
		q.order = append(q.order, pushed{t, t.stamp, q.takes})
	}
}

func (q *prioq) pop() *task {
	if len(q.h) == 0 {
		return nil
	}
	i := 0
	if o := q.oldest(); o != nil && q.takes-o.takes >= q.aging {
		i = o.t.index // aged: it runs first
	}
	q.takes++
	return q.remove(i)
}

// oldest returns the entry of the task queued longest, or nil, dropping the
// stale entries before it.
func (q *prioq) oldest() *pushed {
	if q.aging == 0 {
		return nil
	}
	for q.head < len(q.order) {
		o := &q.order[q.head]
		if o.t.index >= 0 && o.t.stamp == o.stamp {
			return o
		}
		*o = pushed{}
		q.head++
	}
	q.order, q.head = q.order[:0], 0
	return nil
}

// remove takes the task at heap position i out of the heap.
func (q *prioq) remove(i int) *task {
	n := len(q.h) - 1
	t := q.h[i]
	if i != n {
		q.swap(i, n)
	}
	q.h[n] = nil
	q.h = q.h[:n]
	if i < n {
		q.down(i)
		q.up(i)
	}
	t.index = -1
	if q.head > 64 && q.head > len(q.order)/2 { // compact the push-order list
		k := copy(q.order, q.order[q.head:])
		clear(q.order[k:])
		q.order, q.head = q.order[:k], 0
	}
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
