package broken

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/executor"
)

// StealConfig configures the work-stealing base: Workers workers, each with
// a local queue of LocalCap tasks, a global queue checked first every
// GlobalInterval polls, and optionally a LIFO slot for the task most
// recently woken by the running task (polled at most 3 times in a row).
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
	bug     bug
	started sync.Once
	exited  atomic.Int32
	cfg     StealConfig
	gmu     sync.Mutex // guards global, closed
	global  []*task
	closed  bool
	workers []*worker
	nextID  atomic.Int64
	live    live
	park    parker
	wg      sync.WaitGroup
	down    atomic.Bool
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
	ex.live.init(&ex.ctl)
	ex.park.init(&ex.ctl, b)
	for w := 0; w < cfg.Workers; w++ {
		ex.workers = append(ex.workers, &worker{id: w, dq: newDeque(cfg.LocalCap)})
	}
	return ex
}

// start starts the workers, once, at the first Spawn (so that SetScheduler
// comes first).
func (ex *stealExec) start() {
	ex.started.Do(func() {
		for _, wk := range ex.workers {
			ex.wg.Add(1)
			ex.goWorker(func() { ex.work(wk) })
		}
	})
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
	if wk := ex.current(); wk != nil {
		ex.pushLocal(wk, t)
	} else {
		ex.pushGlobal(t)
	}
	ex.park.notify()
	return t, nil
}

func (ex *stealExec) pushGlobal(t *task) {
	ex.yield(executor.PointPush)
	ex.gmu.Lock()
	ex.global = append(ex.global, t)
	ex.gCount.Store(int64(len(ex.global)))
	ex.gmu.Unlock()
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
// global queue (with the bug, the task is dropped). Owner only.
func (ex *stealExec) pushLocal(wk *worker, t *task) {
	ex.yield(executor.PointPush)
	if wk.dq.push(t) {
		return
	}
	if ex.bug&bugOverflowDrops != 0 {
		return
	}
	ex.pushGlobal(t)
}

// wake queues a woken task: into the LIFO slot or the local queue of the
// worker that woke it, or the global queue when woken from outside.
func (ex *stealExec) wake(t *task) {
	if wk := ex.current(); wk != nil {
		if ex.cfg.LIFOSlot {
			if old := wk.lifo.Swap(t); old != nil {
				ex.pushLocal(wk, old)
			}
		} else {
			ex.pushLocal(wk, t)
		}
	} else {
		ex.pushGlobal(t)
	}
	ex.park.notify()
}

// requeue queues a task NOTIFIED during its poll on wk: at the back of wk's
// local queue, never in the LIFO slot (a task that wakes itself must not
// take the slot from the others).
func (ex *stealExec) requeue(wk *worker, t *task) {
	ex.pushLocal(wk, t)
	ex.park.notify()
}

func (ex *stealExec) finished(*task) { ex.live.done() }

// next finds wk's next task: the global queue every GlobalInterval polls,
// then the LIFO slot (at most maxLIFOPolls in a row), the local queue, the
// global queue, and the other workers' queues.
func (ex *stealExec) next(wk *worker) *task {
	ex.yield(executor.PointPop)
	wk.ticks++
	localWork := !wk.dq.empty() || wk.lifo.Load() != nil
	if wk.ticks%ex.cfg.GlobalInterval == 0 && !(ex.bug&bugGlobalStarved != 0 && localWork) {
		if t := ex.popGlobal(); t != nil {
			return t
		}
	}
	if t := wk.lifo.Swap(nil); t != nil {
		if wk.lifoPolls < maxLIFOPolls || ex.bug&bugLIFOStarves != 0 {
			wk.lifoPolls++
			return t
		}
		ex.pushLocal(wk, t)
	}
	wk.lifoPolls = 0
	if t := wk.dq.take(); t != nil {
		return t
	}
	if ex.bug&bugGlobalStarved == 0 || !localWork {
		if t := ex.popGlobal(); t != nil {
			return t
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
			return t
		}
	}
	return nil
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

func (ex *stealExec) work(wk *worker) {
	defer ex.exited.Add(1)
	defer ex.wg.Done()
	wk.gid.Store(goid())
	cx := executor.NewContext(executor.Waker{}, wk.id)
	for {
		if ex.down.Load() {
			return
		}
		t := ex.next(wk)
		if t == nil {
			if !ex.park.park(ex.hasWork) {
				return
			}
			continue
		}
		cx.Reset(executor.NewWaker(t), wk.id)
		if t.poll(cx) {
			ex.requeue(wk, t)
		}
	}
}

// Wait implements executor.Executor.
func (ex *stealExec) Wait() error {
	ex.live.wait()
	return nil
}

// Close implements executor.Executor; with the shutdown bug it stops the
// workers at once and drops whatever is queued.
func (ex *stealExec) Close() error {
	ex.gmu.Lock()
	if ex.closed {
		ex.gmu.Unlock()
		return executor.ErrClosed
	}
	ex.closed = true
	ex.gmu.Unlock()
	ex.start() // so that there are workers to stop
	if ex.bug&bugShutdownDrops == 0 {
		ex.live.wait()
	} else {
		ex.down.Store(true)
	}
	ex.park.close()
	if s := ex.sched; s != nil {
		s.Block(executor.PointNone, func() bool { return ex.exited.Load() == int32(len(ex.workers)) })
	} else {
		ex.wg.Wait()
	}
	return nil
}
