package broken

import (
	"sync"

	"github.com/execspec/execspec/executor"
)

// Runaway returns a black-box executor that never stops on its own: when a
// task returns Ready it publishes the result and then, on a goroutine of its
// own, polls the finished future again in a loop without end, as a retry
// loop gone wrong would. It is not in the Catalogue: it exists to show that
// the suite stops such an executor after the failing case (its polls are cut
// off) instead of recording one violation per poll until memory runs out.
func Runaway() executor.Executor {
	e := &runaway{}
	e.cond.L = &e.mu
	go e.work()
	return e
}

type runaway struct {
	mu      sync.Mutex
	cond    sync.Cond
	q       []*rtask
	pending int
	closed  bool
	ids     int64
}

type rtask struct {
	e        *runaway
	id       int64
	f        executor.Future
	state    int // 0 waiting, 1 queued, 2 running, 3 notified, 4 done
	value    any
	doneC    chan struct{}
	awaiters []executor.Waker
}

func (t *rtask) Wake() {
	e := t.e
	e.mu.Lock()
	defer e.mu.Unlock()
	switch t.state {
	case 0:
		t.state = 1
		e.q = append(e.q, t)
		e.cond.Broadcast()
	case 2:
		t.state = 3
	}
}

func (t *rtask) Clone() executor.RawWaker { return t }

func (t *rtask) Poll(cx *executor.Context) (any, bool) {
	t.e.mu.Lock()
	defer t.e.mu.Unlock()
	if t.state == 4 {
		return t.value, true
	}
	t.awaiters = append(t.awaiters, cx.Waker())
	return nil, false
}

func (t *rtask) Join() (any, error) { <-t.doneC; return t.value, nil }

func (e *runaway) Spawn(f executor.Future) (executor.Handle, error) {
	if f == nil {
		return nil, executor.ErrNilFuture
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, executor.ErrClosed
	}
	e.ids++
	t := &rtask{e: e, id: e.ids, f: f, state: 1, doneC: make(chan struct{})}
	e.q = append(e.q, t)
	e.pending++
	e.cond.Broadcast()
	return t, nil
}

func (e *runaway) work() {
	for {
		e.mu.Lock()
		for len(e.q) == 0 {
			e.cond.Wait()
		}
		t := e.q[0]
		e.q = e.q[1:]
		t.state = 2
		e.mu.Unlock()
		cx := executor.NewContext(executor.NewWaker(t), 0)
		v, ready := pollRecover(t.f, cx)
		e.mu.Lock()
		switch {
		case ready:
			t.state, t.value = 4, v
			ws := t.awaiters
			e.pending--
			close(t.doneC)
			e.cond.Broadcast()
			e.mu.Unlock()
			for _, w := range ws {
				w.Wake()
			}
			// The bug: poll the finished future again, for ever.
			go func() {
				for {
					pollRecover(t.f, cx)
				}
			}()
			continue
		case t.state == 3:
			t.state = 1
			e.q = append(e.q, t)
		default:
			t.state = 0
		}
		e.mu.Unlock()
	}
}

func pollRecover(f executor.Future, cx *executor.Context) (v any, ready bool) {
	defer func() {
		if recover() != nil {
			v, ready = nil, true
		}
	}()
	return f.Poll(cx)
}

func (e *runaway) Wait() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for e.pending > 0 {
		e.cond.Wait()
	}
	return nil
}

func (e *runaway) Close() error {
	if err := closeOnce(&e.mu, &e.closed); err != nil {
		return err
	}
	return e.Wait()
}
