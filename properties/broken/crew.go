package broken

import (
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/executor"
)

// crew is the workers of a base executor (queueExec, stealExec) and what
// their lifetime needs: the parker, the count of live tasks, the workers
// started once at the first Spawn, each a loop that takes a task, polls it
// and parks when there is none, and their stop at Close, correct or with
// the shutdown bug. The base executor says how a worker finds its next
// task; the rest is the same for both.
type crew struct {
	c       *ctl
	n       int         // workers
	run     func(w int) // worker w's goroutine: the base executor's, around loop
	started sync.Once   // start
	wg      sync.WaitGroup
	exited  atomic.Int32 // workers returned, for a Block under a Scheduler
	down    atomic.Bool  // stop at once, dropping what is queued (the shutdown bug)
	live    live
	park    parker
}

func (k *crew) init(c *ctl, n int, b bug, run func(w int)) {
	k.c, k.n, k.run = c, n, run
	k.live.init(c)
	k.park.init(c, b)
	c.initWorkers(n)
}

// start starts the workers, once, at the first Spawn (so that
// SetScheduler comes first).
func (k *crew) start() {
	k.started.Do(func() {
		for w := 0; w < k.n; w++ {
			k.wg.Add(1)
			k.c.goWorker(func() { k.run(w) })
		}
	})
}

// loop is worker w's loop until the stop: next takes its next task (and
// records the take), nil when there is none; then the worker parks until
// hasWork. A poll that queued work wakes a parked worker.
func (k *crew) loop(w int, next func() *task, hasWork func() bool) {
	defer k.exited.Add(1)
	defer k.wg.Done()
	k.c.enter(w)
	cx := executor.NewContext(executor.Waker{}, w)
	for {
		if k.down.Load() {
			return
		}
		t := next()
		if t == nil {
			if !k.park.park(hasWork) {
				return
			}
			continue
		}
		cx.Reset(executor.NewWaker(t), w)
		if t.poll(cx, w) {
			k.park.notify()
		}
	}
}

// stop stops the workers of an executor that Close has just closed to new
// tasks: it waits for the spawned tasks (with the shutdown bug, drops, it
// stops the workers at once and drops whatever is queued), wakes the
// parked workers and waits for every worker to return: a Block under a
// Scheduler.
func (k *crew) stop(drops bool) {
	k.start() // so that there are workers to stop
	if !drops {
		k.live.wait()
	} else {
		k.down.Store(true)
	}
	k.park.close()
	if s := k.c.sched; s != nil {
		s.Block(executor.PointNone, func() bool { return k.exited.Load() == int32(k.n) })
		return
	}
	k.wg.Wait()
}

// closeOnce marks an executor closed to new tasks, under mu: nil the first
// time, executor.ErrClosed after, as Close must answer.
func closeOnce(mu *sync.Mutex, closed *bool) error {
	mu.Lock()
	defer mu.Unlock()
	if *closed {
		return executor.ErrClosed
	}
	*closed = true
	return nil
}

// Wait implements executor.Executor.
func (k *crew) Wait() error {
	k.live.wait()
	return nil
}

// notify tells a parked worker of a push (sched).
func (k *crew) notify() { k.park.notify() }

// finished counts a task done (sched).
func (k *crew) finished(*task) { k.live.done() }
