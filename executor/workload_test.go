package executor

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// env is how a workload starts helper goroutines and lets them wait: plain
// goroutines and channels normally, controlled goroutines that yield under
// a test Scheduler (a controlled goroutine must never block on a channel).
type env struct {
	gofn  func(func())
	sched Scheduler
	scale int // divides the sizes of workloads (controlled runs are slower)
}

func plainEnv() env { return env{gofn: func(f func()) { go f() }, scale: 1} }

func (e env) n(x int) int { return max(x/e.scale, 2) }

// mailbox carries wakers from tasks to a helper goroutine that wakes them,
// so that wakes come from outside the executor's workers, before, during or
// after the poll that registered them.
type mailbox struct {
	mu     sync.Mutex
	ws     []Waker
	closed bool
	over   bool // serve has returned
	note   chan struct{}
	env    env
}

// startMailbox returns a mailbox whose helper goroutine runs already: it
// wakes each waker put in it wakes times (serve).
func startMailbox(e env, wakes int) *mailbox {
	m := &mailbox{note: make(chan struct{}, 1), env: e}
	e.gofn(func() { m.serve(wakes) })
	return m
}

func (m *mailbox) put(w Waker) {
	m.mu.Lock()
	m.ws = append(m.ws, w)
	m.mu.Unlock()
	select {
	case m.note <- struct{}{}:
	default:
	}
}

// close stops the helper and waits until it has returned, so that every
// Wake it made has returned too: only then is a recorded trace complete (a
// wake records its event after its effect, which another goroutine may
// already have acted on).
func (m *mailbox) close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	select {
	case m.note <- struct{}{}:
	default:
	}
	for {
		m.mu.Lock()
		over := m.over
		m.mu.Unlock()
		if over {
			return
		}
		if m.env.sched != nil {
			m.env.sched.Yield(PointNone)
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// serve wakes every waker put in m until m is closed. wakes is how many
// times each waker is woken (1, or more to test coalescing).
func (m *mailbox) serve(wakes int) {
	for {
		m.mu.Lock()
		ws, closed := m.ws, m.closed
		m.ws = nil
		m.mu.Unlock()
		for _, w := range ws {
			for range wakes {
				w.Clone().Wake()
			}
		}
		if len(ws) > 0 {
			continue
		}
		if closed {
			m.mu.Lock()
			m.over = true
			m.mu.Unlock()
			return
		}
		if m.env.sched != nil {
			m.env.sched.Yield(PointNone)
		} else {
			<-m.note
		}
	}
}

// workload is one entry of the table every executor runs. run spawns its
// tasks on ex, waits for them, checks their results, and returns how many
// tasks it spawned.
type workload struct {
	name string
	// controlled says whether the workload can run under the test
	// Scheduler (every goroutine it starts is controlled).
	controlled bool
	run        func(ex Executor, e env) (int, error)
}

// pendingK is a future that returns Pending k times, handing its waker to
// wake each time, then Ready(v). It checks that it is never polled after
// Ready nor concurrently.
type pendingK struct {
	k, polls int
	v        any
	busy     atomic.Bool
	done     bool
	wake     func(Waker)
	bad      *atomic.Int64
}

func (f *pendingK) Poll(cx *Context) (any, bool) {
	if !f.busy.CompareAndSwap(false, true) {
		f.bad.Add(1) // polled concurrently
	}
	defer f.busy.Store(false)
	if f.done {
		f.bad.Add(1) // polled after Ready
	}
	if f.polls == f.k {
		f.done = true
		return f.v, true
	}
	f.polls++
	f.wake(cx.Waker())
	return nil, false
}

func joinAll(hs []Handle, want func(i int) any) error {
	var errs []error
	for i, h := range hs {
		v, err := h.Join()
		if err != nil {
			errs = append(errs, fmt.Errorf("task %d: %w", i, err))
		} else if w := want(i); v != w {
			errs = append(errs, fmt.Errorf("task %d: value %v, want %v", i, v, w))
		}
		if len(errs) > 5 {
			break
		}
	}
	return errors.Join(errs...)
}

// joinPolled checks the end of a workload of pendingK futures: no poll
// was concurrent or after Ready (bad counts them), and task i returned i.
func joinPolled(hs []Handle, bad *atomic.Int64) error {
	if b := bad.Load(); b != 0 {
		return fmt.Errorf("%d polls were concurrent or after Ready", b)
	}
	return joinAll(hs, func(i int) any { return i })
}

// spawnWait is a workload's frame: it spawns n tasks made by mk, waits for
// the executor and checks the handles with check. It returns the tasks
// spawned (0 when a spawn failed) and the first error.
func spawnWait(ex Executor, n int, mk func(i int) Future, check func(hs []Handle) error) (int, error) {
	hs, err := spawnAll(ex, n, mk)
	if err != nil {
		return 0, err
	}
	if err := ex.Wait(); err != nil {
		return n, err
	}
	return n, check(hs)
}

func spawnAll(ex Executor, n int, mk func(i int) Future) ([]Handle, error) {
	hs := make([]Handle, n)
	for i := range hs {
		h, err := ex.Spawn(mk(i))
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	return hs, nil
}

var workloads = []workload{
	{"trivial", true, func(ex Executor, e env) (int, error) {
		n := e.n(3000)
		return spawnWait(ex, n, func(i int) Future {
			return FutureFunc(func(*Context) (any, bool) { return i, true })
		}, func(hs []Handle) error { return joinAll(hs, func(i int) any { return i }) })
	}},
	{"wake_from_outside", true, func(ex Executor, e env) (int, error) {
		// Each task is Pending 3 times; a helper goroutine wakes it, twice
		// each time (the second wake coalesces or comes late).
		n := e.n(600)
		var bad atomic.Int64
		mb := startMailbox(e, 2)
		defer mb.close()
		return spawnWait(ex, n, func(i int) Future {
			return &pendingK{k: 3, v: i, wake: mb.put, bad: &bad}
		}, func(hs []Handle) error { return joinPolled(hs, &bad) })
	}},
	{"wake_during_poll", true, func(ex Executor, e env) (int, error) {
		// Each task wakes itself during its own poll (NOTIFIED), with a
		// copy of its waker, 4 times.
		n := e.n(800)
		var bad atomic.Int64
		return spawnWait(ex, n, func(i int) Future {
			return &pendingK{k: 4, v: i, wake: func(w Waker) { w.Clone().Wake(); w.Wake() }, bad: &bad}
		}, func(hs []Handle) error { return joinPolled(hs, &bad) })
	}},
	{"chain_of_awaits", true, func(ex Executor, e env) (int, error) {
		// Task i awaits task i-1's handle and adds one: the wakes run
		// along the chain, from whichever worker completes a task.
		n := e.n(400)
		hs := make([]Handle, n)
		for i := range hs {
			var prev Handle
			if i > 0 {
				prev = hs[i-1]
			}
			h, err := ex.Spawn(FutureFunc(func(cx *Context) (any, bool) {
				if prev == nil {
					return 0, true
				}
				v, ok := prev.Poll(cx)
				if !ok {
					return nil, false
				}
				return v.(int) + 1, true
			}))
			if err != nil {
				return 0, err
			}
			hs[i] = h
		}
		if err := ex.Wait(); err != nil {
			return n, err
		}
		return n, joinAll(hs, func(i int) any { return i })
	}},
	{"ping_pong", true, func(ex Executor, e env) (int, error) {
		// Two tasks take turns through wakers they exchange.
		rounds := e.n(1000)
		var mu sync.Mutex
		turn := 0
		var wakers [2]Waker
		var hits [2]int
		mk := func(me int) Future {
			return FutureFunc(func(cx *Context) (any, bool) {
				mu.Lock()
				defer mu.Unlock()
				wakers[me] = cx.Waker()
				for turn%2 == me && turn < 2*rounds {
					turn++
					hits[me]++
					if o := wakers[1-me]; o.Raw() != nil {
						o.Wake()
					}
				}
				if turn >= 2*rounds {
					if o := wakers[1-me]; o.Raw() != nil {
						o.Wake()
					}
					return hits[me], true
				}
				return nil, false
			})
		}
		return spawnWait(ex, 2, mk, func(hs []Handle) error { return joinAll(hs, func(int) any { return rounds }) })
	}},
	{"spawn_tree", true, func(ex Executor, e env) (int, error) {
		// Tasks spawn tasks from inside their polls (onto the local queue
		// of a work-stealing worker), then await them.
		depth := 9
		if e.scale > 1 {
			depth = 5
		}
		var count atomic.Int64
		var node func(d int) Future
		node = func(d int) Future {
			var kids []Handle
			return FutureFunc(func(cx *Context) (any, bool) {
				if kids == nil {
					count.Add(1)
					if d == 0 {
						return 1, true
					}
					for range 2 {
						h, err := ex.Spawn(node(d - 1))
						if err != nil {
							return Failed{err}, true
						}
						kids = append(kids, h)
					}
				}
				sum := 1
				for _, k := range kids {
					v, ok := k.Poll(cx)
					if !ok {
						return nil, false
					}
					sum += v.(int)
				}
				return sum, true
			})
		}
		h, err := ex.Spawn(node(depth))
		if err != nil {
			return 0, err
		}
		if err := ex.Wait(); err != nil {
			return 0, err
		}
		want := 1<<(depth+1) - 1
		return int(count.Load()), joinAll([]Handle{h}, func(int) any { return want })
	}},
	{"panics", true, func(ex Executor, e env) (int, error) {
		// Every 7th task panics (some after a Pending); the others finish.
		n := e.n(700)
		var bad atomic.Int64
		mb := startMailbox(e, 1)
		defer mb.close()
		return spawnWait(ex, n, func(i int) Future {
			p := &pendingK{k: i % 2, v: i, wake: mb.put, bad: &bad}
			return FutureFunc(func(cx *Context) (any, bool) {
				v, ok := p.Poll(cx)
				if ok && i%7 == 0 {
					panic(fmt.Sprintf("task %d fails", i))
				}
				return v, ok
			})
		}, func(hs []Handle) error {
			var errs []error
			for i, h := range hs {
				v, err := h.Join()
				var pe *PanicError
				switch {
				case i%7 == 0 && (!errors.As(err, &pe) || pe.Value != fmt.Sprintf("task %d fails", i) || len(pe.Stack) == 0):
					errs = append(errs, fmt.Errorf("task %d: error %v, want its panic with a stack", i, err))
				case i%7 != 0 && (err != nil || v != i):
					errs = append(errs, fmt.Errorf("task %d: %v, %v", i, v, err))
				}
			}
			return errors.Join(errs...)
		})
	}},
	{"late_wakes", true, func(ex Executor, e env) (int, error) {
		// Tasks keep their wakers; after they are all DONE, every waker is
		// called again. The wakes must be ignored.
		n := e.n(300)
		ws := make([]Waker, n)
		return spawnWait(ex, n, func(i int) Future {
			return FutureFunc(func(cx *Context) (any, bool) {
				ws[i] = cx.Waker().Clone()
				return i, true
			})
		}, func(hs []Handle) error {
			for _, w := range ws {
				w.Wake()
				w.Wake()
			}
			if err := ex.Wait(); err != nil {
				return err
			}
			return joinAll(hs, func(i int) any { return i })
		})
	}},
}
