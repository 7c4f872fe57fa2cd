package broken

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// StealConfig configures the work-stealing base: Workers workers, each with
// a local queue of LocalCap tasks, a global queue checked first every
// GlobalInterval polls, and optionally a LIFO slot that takes a task the
// running task spawned or woke when the slot is empty (polled at most 3
// times in a row before the local queue).
type StealConfig struct {
	Workers        int // 0 means 2
	LocalCap       int // 0 means 4
	GlobalInterval int // 0 means 4
	LIFOSlot       bool
}

const maxLIFOPolls = 3

// stealExec is the work-stealing base. It is correct unless bug is set.
type stealExec struct {
	ctl
	crew
	bug     bug
	cfg     StealConfig
	gmu     sync.Mutex // guards global, closed
	global  []*task
	closed  bool
	workers []*worker
	nextID  atomic.Int64
	gCount  atomic.Int64 // len(global), readable without gmu
}

type worker struct {
	id        int
	gid       atomic.Int64 // goroutine id of the worker, to recognize wakes made by it
	dq        *deque
	lifo      atomic.Pointer[task]
	lifoPolls int
	ticks     int
}

// NewSteal returns a correct work-stealing executor.
func NewSteal(cfg StealConfig) executor.Executor { return newSteal(cfg, 0) }

func newSteal(cfg StealConfig, b bug) executor.Executor {
	if cfg.Workers == 0 {
		cfg.Workers = 2
	}
	if cfg.LocalCap == 0 {
		cfg.LocalCap = 4
	}
	if cfg.GlobalInterval == 0 {
		cfg.GlobalInterval = 4
	}
	ex := &stealExec{bug: b, cfg: cfg}
	ex.crew.init(&ex.ctl, cfg.Workers, b, ex.work)
	for w := 0; w < cfg.Workers; w++ {
		ex.workers = append(ex.workers, &worker{id: w, dq: newDeque(cfg.LocalCap)})
	}
	return ex
}

func (ex *stealExec) bugs() bug { return ex.bug }

// current returns the worker running on this goroutine, or nil.
func (ex *stealExec) current() *worker {
	g := goid()
	for _, wk := range ex.workers {
		if wk.gid.Load() == g {
			return wk
		}
	}
	return nil
}

// goid returns the current goroutine's id, read from its stack header. It
// costs about a microsecond; the catalogue's executors are for tests.
func goid() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	n, _ := strconv.ParseInt(string(b), 10, 64)
	return n
}

// Spawn implements executor.Executor (SPAWN): onto the spawning worker's
// local queue from inside a task, onto the global queue from outside.
func (ex *stealExec) Spawn(f executor.Future) (executor.Handle, error) {
	if f == nil {
		return nil, executor.ErrNilFuture
	}
	ex.start()
	ex.yield(executor.PointSpawn)
	ex.gmu.Lock()
	closed := ex.closed
	if !closed {
		ex.live.add()
	}
	ex.gmu.Unlock()
	if closed {
		return nil, executor.ErrClosed
	}
	t := newTask(ex.nextID.Add(1), f, ex)
	ex.lockRec()
	var q traces.Queue
	wk := ex.current()
	if wk != nil {
		q = ex.pushNew(wk, t)
	} else {
		q = ex.pushGlobal(t)
	}
	ex.emit(traces.Event{Kind: traces.KindSpawn, Task: t.id, Worker: wkID(wk), Queue: q})
	ex.unlockRec()
	ex.park.notify()
	return t, nil
}

func wkID(wk *worker) int32 {
	if wk == nil {
		return -1
	}
	return int32(wk.id)
}

func (ex *stealExec) pushGlobal(t *task) traces.Queue {
	ex.yield(executor.PointPush)
	ex.gmu.Lock()
	ex.global = append(ex.global, t)
	ex.gCount.Store(int64(len(ex.global)))
	ex.gmu.Unlock()
	return traces.QueueGlobal
}

func (ex *stealExec) popGlobal() *task {
	if ex.gCount.Load() == 0 {
		return nil
	}
	ex.gmu.Lock()
	defer ex.gmu.Unlock()
	if len(ex.global) == 0 {
		return nil
	}
	t := ex.global[0]
	ex.global = ex.global[1:]
	ex.gCount.Store(int64(len(ex.global)))
	return t
}

// pushLocal queues t on wk's local queue; a full queue overflows to the
// global queue (with the bug, the task is dropped, and recorded as pushed
// onto the full local queue, where it went). Owner only; the caller holds
// the record lock.
func (ex *stealExec) pushLocal(wk *worker, t *task) traces.Queue {
	ex.yield(executor.PointPush)
	if wk.dq.push(t) {
		return traces.LocalQueue(wk.id)
	}
	if ex.bug&bugOverflowDrops != 0 {
		return traces.LocalQueue(wk.id)
	}
	return ex.pushGlobal(t)
}

// place queues a woken task: into the LIFO slot or the local queue of the
// worker that woke it, or the global queue when woken from outside. A task
// NOTIFIED during its poll (requeue) goes to the back of the polling
// worker's local queue, never into the LIFO slot (a task that wakes itself
// must not take the slot from the others). The caller holds the record
// lock.
func (ex *stealExec) place(t *task, requeue bool) traces.Queue {
	wk := ex.current()
	switch {
	case wk == nil:
		return ex.pushGlobal(t)
	case requeue:
		return ex.pushLocal(wk, t)
	}
	return ex.pushNew(wk, t)
}

// pushNew queues a task spawned or woken on wk: into the LIFO slot when
// there is one and it is empty, else onto the local queue.
func (ex *stealExec) pushNew(wk *worker, t *task) traces.Queue {
	if ex.cfg.LIFOSlot && wk.lifo.Load() == nil {
		ex.yield(executor.PointPush)
		wk.lifo.Store(t)
		return traces.LocalQueue(wk.id)
	}
	return ex.pushLocal(wk, t)
}

// next finds wk's next task: the global queue every GlobalInterval polls,
// then the LIFO slot (at most maxLIFOPolls in a row), the local queue, the
// global queue, and the other workers' queues.
func (ex *stealExec) next(wk *worker) *task {
	ex.yield(executor.PointPop)
	ex.lockRec()
	defer ex.unlockRec()
	t, src, victim := ex.nextLocked(wk)
	if t != nil {
		wk.ticks++ // the interval counts polls, as the model's does
		ex.took(t, wk.id, src, victim)
	}
	return t
}

func (ex *stealExec) nextLocked(wk *worker) (*task, traces.Source, int) {
	localWork := !wk.dq.empty() || wk.lifo.Load() != nil
	if (wk.ticks+1)%ex.cfg.GlobalInterval == 0 && !(ex.bug&bugGlobalStarved != 0 && localWork) {
		if t := ex.popGlobal(); t != nil {
			return t, traces.SourceGlobal, -1
		}
	}
	if t := wk.lifo.Load(); t != nil && (wk.lifoPolls < maxLIFOPolls || ex.bug&bugLIFOStarves != 0) {
		wk.lifo.Store(nil)
		wk.lifoPolls++
		return t, traces.SourceLIFO, -1
	}
	// The slot's limit came round (or it is empty): the local queue first.
	wk.lifoPolls = 0
	if t := wk.dq.take(); t != nil {
		return t, traces.SourceLocal, -1
	}
	if t := wk.lifo.Swap(nil); t != nil {
		return t, traces.SourceLIFO, -1
	}
	if ex.bug&bugGlobalStarved == 0 || !localWork {
		if t := ex.popGlobal(); t != nil {
			return t, traces.SourceGlobal, -1
		}
	}
	for i := 1; i < len(ex.workers); i++ {
		v := ex.workers[(wk.id+i)%len(ex.workers)]
		var t *task
		if ex.bug&bugStealOwnerEnd != 0 {
			t = v.dq.stealOwnerEnd(&ex.ctl)
		} else {
			t = v.dq.steal(&ex.ctl)
		}
		if t != nil {
			return t, traces.SourceSteal, v.id
		}
	}
	return nil, traces.SourceNone, -1
}

func (ex *stealExec) hasWork() bool {
	if ex.gCount.Load() > 0 {
		return true
	}
	for _, wk := range ex.workers {
		if !wk.dq.empty() || wk.lifo.Load() != nil {
			return true
		}
	}
	return false
}

func (ex *stealExec) work(w int) {
	wk := ex.workers[w]
	wk.gid.Store(goid())
	ex.loop(w, func() *task { return ex.next(wk) }, ex.hasWork)
}

// Close implements executor.Executor; with the shutdown bug it stops the
// workers at once and drops whatever is queued.
func (ex *stealExec) Close() error {
	if err := closeOnce(&ex.gmu, &ex.closed); err != nil {
		return err
	}
	ex.stop(ex.bug&bugShutdownDrops != 0)
	return nil
}

// Describe implements executor.Describer: the work-stealing base follows
// the model's "worksteal" policy with its configuration.
func (ex *stealExec) Describe() traces.Header {
	lifo := 0
	if ex.cfg.LIFOSlot {
		lifo = 1
	}
	return traces.Header{Format: traces.Format, Version: traces.Version, Executor: "broken-steal", Workers: ex.cfg.Workers, Policy: "worksteal",
		Config: map[string]int{"local-cap": ex.cfg.LocalCap, "global-interval": ex.cfg.GlobalInterval, "owner-lifo": 0, "steal-half": 0, "lifo-slot": lifo}}
}
