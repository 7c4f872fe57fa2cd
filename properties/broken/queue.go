package broken

import (
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// QueueConfig configures the single-queue base: Workers goroutines share
// one queue, FIFO, or by priority with aging when Priority is set.
type QueueConfig struct {
	Workers  int // 0 means 1
	Priority bool
}

// queueExec is the single-queue base executor. One mutex guards the queue;
// workers park through a parker (crew). It is correct unless bug is set.
type queueExec struct {
	ctl
	crew
	bug    bug
	mu     sync.Mutex // guards q, pops, closed
	q      []*task
	pops   int64
	closed bool
	prio   bool
	nextID atomic.Int64
}

// NewQueue returns a correct single-queue executor.
func NewQueue(cfg QueueConfig) executor.Executor { return newQueue(cfg, 0) }

func newQueue(cfg QueueConfig, b bug) executor.Executor {
	ex := &queueExec{bug: b, prio: cfg.Priority}
	ex.crew.init(&ex.ctl, max(cfg.Workers, 1), b, ex.work)
	if cfg.Priority {
		return &prioQueue{ex}
	}
	return ex
}

// prioQueue is a queueExec that takes priorities.
type prioQueue struct{ *queueExec }

// SpawnPriority implements executor.Prioritized.
func (p *prioQueue) SpawnPriority(f executor.Future, priority int) (executor.Handle, error) {
	return p.spawn(f, priority)
}

func (ex *queueExec) bugs() bug { return ex.bug }

// Spawn implements executor.Executor (SPAWN).
func (ex *queueExec) Spawn(f executor.Future) (executor.Handle, error) { return ex.spawn(f, 0) }

func (ex *queueExec) spawn(f executor.Future, prio int) (executor.Handle, error) {
	if f == nil {
		return nil, executor.ErrNilFuture
	}
	ex.start()
	t := newTask(ex.nextID.Add(1), f, ex)
	t.prio = prio
	ex.yield(executor.PointSpawn)
	ex.lockRec()
	ex.mu.Lock()
	if ex.closed {
		ex.mu.Unlock()
		ex.unlockRec()
		return nil, executor.ErrClosed
	}
	ex.live.add()
	ex.pushLocked(t)
	ex.mu.Unlock()
	ex.emit(traces.Event{Kind: traces.KindSpawn, Task: t.id, Worker: ex.self(), Queue: traces.QueueGlobal})
	ex.unlockRec()
	ex.park.notify()
	return t, nil
}

func (ex *queueExec) pushLocked(t *task) {
	t.enqueued = ex.pops
	ex.q = append(ex.q, t)
}

// place queues a woken or re-queued task; the caller holds the record
// lock. Any goroutine.
func (ex *queueExec) place(t *task, _ bool) traces.Queue {
	ex.yield(executor.PointPush)
	ex.mu.Lock()
	ex.pushLocked(t)
	ex.mu.Unlock()
	return traces.QueueGlobal
}

// pop takes the next task: the head, or with priorities the task of the
// highest priority plus age (pops it has waited); without aging (the bug)
// the highest priority alone.
func (ex *queueExec) pop(w int) *task {
	ex.yield(executor.PointPop)
	ex.lockRec()
	defer ex.unlockRec()
	t := ex.popLocked()
	if t != nil {
		ex.took(t, w, traces.SourceGlobal, -1)
	}
	return t
}

func (ex *queueExec) popLocked() *task {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if len(ex.q) == 0 {
		return nil
	}
	best := 0
	if ex.prio {
		score := func(t *task) int64 {
			if ex.bug&bugPriorityNoAging != 0 {
				return int64(t.prio)
			}
			return int64(t.prio) + (ex.pops - t.enqueued)
		}
		for i, t := range ex.q {
			if score(t) > score(ex.q[best]) {
				best = i
			}
		}
	}
	t := ex.q[best]
	ex.q = append(ex.q[:best], ex.q[best+1:]...)
	ex.pops++
	return t
}

func (ex *queueExec) hasWork() bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return len(ex.q) > 0
}

func (ex *queueExec) work(w int) {
	ex.loop(w, func() *task { return ex.pop(w) }, ex.hasWork)
}

// Close implements executor.Executor: it refuses new tasks, waits for the
// spawned ones, and stops the workers. With the shutdown bug it stops the
// workers at once and drops whatever is queued.
func (ex *queueExec) Close() error {
	if err := closeOnce(&ex.mu, &ex.closed); err != nil {
		return err
	}
	ex.stop(ex.bug&bugShutdownDrops != 0)
	return nil
}
