package conform_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/internal/recorded"
	"github.com/execspec/execspec/traces"
)

// waker is a helper goroutine outside the executor that wakes the wakers
// tasks hand it, so that wakes come from outside, before, during or after
// the poll that registered them.
type waker struct {
	ch   chan executor.Waker
	done sync.WaitGroup
}

func newWaker() *waker {
	w := &waker{ch: make(chan executor.Waker, 1024)}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		for k := range w.ch {
			k.Wake()
			if len(w.ch)%3 == 0 {
				k.Clone().Wake() // a second wake, to coalesce or be late
			}
		}
	}()
	return w
}

func (w *waker) stop() { close(w.ch); w.done.Wait() }

// task is a workload future: it returns Pending pendings times, each time
// arranging one wake — its own waker called during the poll (self), or
// handed to the outside waker — then spawns children, then returns Ready
// or panics.
type task struct {
	ex       executor.Executor
	out      *waker
	pendings int
	self     bool
	children int
	panics   bool
	goexit   bool
	await    executor.Handle
}

func (f *task) Poll(cx *executor.Context) (any, bool) {
	if f.await != nil {
		if _, ok := f.await.Poll(cx); !ok {
			return nil, false
		}
		f.await = nil
	}
	if f.pendings > 0 {
		f.pendings--
		if f.self {
			cx.Waker().Wake()
		} else {
			f.out.ch <- cx.Waker().Clone()
		}
		return nil, false
	}
	for range f.children {
		f.ex.Spawn(&task{ex: f.ex, out: f.out, pendings: 1, self: true})
	}
	f.children = 0
	if f.panics {
		panic("workload panic")
	}
	if f.goexit {
		runtime.Goexit() // as testing's FailNow does: the task fails, the worker is replaced
	}
	return 1, true
}

// workload spawns n tasks of every shape on ex and waits for them.
func workload(ex executor.Executor, n int, panics bool) error {
	out := newWaker()
	defer out.stop()
	var first executor.Handle
	for i := range n {
		f := &task{ex: ex, out: out, pendings: i % 4, self: i%3 == 0, children: i % 5 / 4, panics: panics && i%17 == 0}
		f.goexit = panics && i%61 == 5
		if i%50 == 1 {
			f.children = 24 // a fan-out onto the local queue: work to steal
		}
		if i%7 == 3 && first != nil {
			f.await = first
		}
		h, err := ex.Spawn(f)
		if err != nil {
			return fmt.Errorf("spawn: %w", err)
		}
		if first == nil {
			first = h
		}
	}
	if err := ex.Wait(); err != nil {
		return fmt.Errorf("wait: %w", err)
	}
	return nil
}

// keepFailing writes a failing trace under testdata/conform so that it can
// be replayed (verify check FILE) and handed to the executor's owner.
func keepFailing(t *testing.T, name string, h traces.Header, events []traces.Event) {
	path := filepath.Join("testdata", "conform", "failing_"+name+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Log(err)
		return
	}
	if err := traces.WriteFile(path, h, events); err != nil {
		t.Log(err)
		return
	}
	t.Logf("trace written to %s", path)
}

func conforms(t *testing.T, name string, h traces.Header, events []traces.Event) *conform.Report {
	t.Helper()
	c, err := conform.New(h)
	if err != nil {
		t.Fatalf("header %+v: %v", h, err)
	}
	for _, e := range events {
		if c.Step(e) != nil {
			break
		}
	}
	r := c.Finish()
	if r.Verdict != checker.Holds {
		if r.Err != nil {
			t.Errorf("%s: %s\nstate:\n%s", name, r.Err.Msg, r.Err.State)
		} else {
			t.Errorf("%s: %s", name, r.Summary())
		}
		keepFailing(t, name, h, events)
		return r
	}
	if len(r.Warnings) > 0 {
		t.Errorf("%s: warnings on a correct executor:\n%s", name, r.Summary())
	}
	t.Logf("%s: %d events, %d tasks, %d panics, fairness %d polls / %d ticks, %d relaxed", name, r.Events, r.Tasks, len(r.Panics), r.MaxOtherPolls, r.MaxDelay, r.Relaxed)
	return r
}

// fair checks the trace's fairness figure against the bound the executor
// states for the number of tasks it ran.
func fair(t *testing.T, name string, ex executor.Executor, r *conform.Report) {
	t.Helper()
	b, ok := ex.(executor.Bounded)
	if !ok || r.Verdict != checker.Holds {
		return
	}
	if bound := b.FairnessBound(r.Tasks); bound >= 0 && r.MaxOtherPolls > bound {
		t.Errorf("%s: task %d waited for %d polls of other tasks; the executor states at most %d for %d tasks", name, r.MaxOtherPollsTask, r.MaxOtherPolls, bound, r.Tasks)
	}
}

// Every built-in executor, and the work-stealing one in each of its
// configurations, records traces that conform to its policy.
func TestConformanceExecutors(t *testing.T) {
	type cons struct {
		name string
		new  func() executor.Executor
	}
	var all []cons
	for _, name := range executor.BuiltinNames() {
		f, _ := executor.Builtin(name)
		all = append(all, cons{name, f})
	}
	all = append(all,
		cons{"worksteal-3-small", func() executor.Executor {
			return executor.NewWorkSteal(executor.WorkStealConfig{Workers: 3, LocalCap: 2, GlobalInterval: 3})
		}},
		cons{"worksteal-fifo-half", func() executor.Executor {
			return executor.NewWorkSteal(executor.WorkStealConfig{Workers: 3, LocalCap: 4, OwnerFIFO: true, StealHalf: true})
		}},
		cons{"worksteal-slot", func() executor.Executor {
			return executor.NewWorkSteal(executor.WorkStealConfig{Workers: 2, LocalCap: 2, LIFOSlot: true, LIFOMax: 2})
		}},
		cons{"wakeable-3", func() executor.Executor { return executor.NewWakeable(3) }},
		cons{"timeslice-2", func() executor.Executor {
			return executor.NewTimeslice(executor.TimesliceConfig{Workers: 2, Slice: 1})
		}},
		cons{"priority-2", func() executor.Executor {
			return executor.NewPriority(executor.PriorityConfig{Workers: 2})
		}},
	)
	n := 400
	if testing.Short() {
		n = 100
	}
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) {
			for run := range 3 {
				ex := c.new()
				h, events := recorded.Run(t, ex, func() error { return workload(ex, n, run == 2) })
				name := fmt.Sprintf("%s_%d", c.name, run)
				fair(t, name, ex, conforms(t, name, h, events))
			}
		})
	}
}

// The retry executor's re-runs of failed tasks conform: SpawnRetry tasks
// are re-queued after each failure, at most the executor's retries times.
func TestConformanceRetryExecutor(t *testing.T) {
	ex := executor.NewRetry(executor.RetryConfig{Workers: 2, Retries: 2})
	var log traces.Log
	ex.SetRecorder(&log)
	var fails atomic.Int64
	for i := range 50 {
		attempts := 0
		factory := func() executor.Future {
			attempts++
			a := attempts
			return executor.FutureFunc(func(cx *executor.Context) (any, bool) {
				if a <= i%4 { // fails i%4 times: the last ones exhaust the retries
					fails.Add(1)
					panic("attempt failed")
				}
				return a, true
			})
		}
		if _, err := ex.SpawnRetry(factory, -1); err != nil {
			t.Fatal(err)
		}
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	conforms(t, "retry-spawnretry", ex.Describe(), log.Events())
	if fails.Load() == 0 {
		t.Fatal("no task failed: the workload does not exercise retries")
	}
}

// brokenExec is a deliberately broken executor: one worker, one FIFO queue,
// and a WAKE that is not idempotent: waking a task that is already QUEUED
// pushes it a second time (and says so in its trace), so the task is polled
// again after it returned Ready.
type brokenExec struct {
	mu     sync.Mutex
	cond   sync.Cond
	q      []*btask
	rec    executor.Recorder
	clock  atomic.Uint64
	ids    atomic.Int64
	live   int
	closed bool
	done   chan struct{}
}

type btask struct {
	id    int64
	f     executor.Future
	e     *brokenExec
	state int // 0 queued, 1 running, 2 waiting, 3 notified, 4 done
	done  bool
}

func newBroken() *brokenExec {
	e := &brokenExec{done: make(chan struct{})}
	e.cond.L = &e.mu
	go e.work()
	return e
}

func (e *brokenExec) SetRecorder(r executor.Recorder) { e.rec = r }
func (e *brokenExec) Describe() traces.Header {
	return traces.Header{Format: traces.Format, Version: traces.Version, Executor: "broken-duplicate-enqueue", Workers: 1, Policy: "fifo"}
}
func (e *brokenExec) ev(k traces.Kind, t *btask) traces.Event {
	return traces.Event{Seq: e.clock.Add(1), Kind: k, Task: t.id, Worker: 0, Victim: -1}
}

func (e *brokenExec) Spawn(f executor.Future) (executor.Handle, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := &btask{id: e.ids.Add(1), f: f, e: e}
	e.q = append(e.q, t)
	e.live++
	x := e.ev(traces.KindSpawn, t)
	x.Worker, x.Queue = -1, traces.QueueGlobal
	e.rec.Record(x)
	e.cond.Broadcast()
	return nil, nil
}

func (t *btask) Wake() {
	e := t.e
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.ev(traces.KindWake, t)
	x.Worker = -1
	switch t.state {
	case 1:
		t.state, x.Outcome = 3, traces.OutcomeNotified
	case 2, 0: // the bug: a QUEUED task is pushed again
		t.state, x.Outcome, x.Queue = 0, traces.OutcomeScheduled, traces.QueueGlobal
		e.q = append(e.q, t)
		e.cond.Broadcast()
	case 3:
		x.Outcome = traces.OutcomeCoalesced
	case 4:
		x.Outcome = traces.OutcomeLate
	}
	e.rec.Record(x)
}
func (t *btask) Clone() executor.RawWaker { return t }

func (e *brokenExec) work() {
	defer close(e.done)
	e.mu.Lock()
	for {
		for len(e.q) == 0 && !(e.closed && e.live == 0) {
			e.cond.Wait()
		}
		if len(e.q) == 0 {
			e.mu.Unlock()
			return
		}
		t := e.q[0]
		e.q = e.q[1:]
		x := e.ev(traces.KindTake, t)
		x.Source = traces.SourceGlobal
		e.rec.Record(x)
		t.state = 1
		e.rec.Record(e.ev(traces.KindPollBegin, t))
		e.mu.Unlock()
		_, ready := t.f.Poll(executor.NewContext(executor.NewWaker(t), 0))
		e.mu.Lock()
		x = e.ev(traces.KindPollEnd, t)
		switch {
		case ready:
			x.Result = traces.ResultReady
			if !t.done {
				e.live--
			}
			t.state, t.done = 4, true
			e.rec.Record(x)
		case t.state == 3:
			x.Result = traces.ResultPending
			e.rec.Record(x)
			t.state = 0
			e.q = append(e.q, t)
			r := e.ev(traces.KindRequeue, t)
			r.Queue = traces.QueueGlobal
			e.rec.Record(r)
		default:
			x.Result = traces.ResultPending
			e.rec.Record(x)
			t.state = 2
		}
		e.cond.Broadcast()
	}
}

func (e *brokenExec) Wait() error { return errors.New("not supported") }
func (e *brokenExec) Close() error {
	e.mu.Lock()
	e.closed = true
	e.cond.Broadcast()
	e.mu.Unlock()
	<-e.done
	return nil
}

// The broken executor's trace does not conform: the second wake of a
// QUEUED task is caught as a WAKE that enqueues twice.
func TestConformanceBrokenExecutor(t *testing.T) {
	ex := newBroken()
	var log traces.Log
	ex.SetRecorder(&log)
	for range 20 {
		ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) { return 1, true }))
	}
	// B waits; A, polled next on the only worker, wakes B twice: the
	// first wake queues B, the second pushes it again.
	var bw executor.Waker
	var polls atomic.Int64
	ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
		if polls.Add(1) == 1 {
			bw = cx.Waker().Clone()
			return nil, false
		}
		return 1, true
	}))
	ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
		bw.Wake()
		bw.Wake()
		return 1, true
	}))
	ex.Close()
	r, err := conform.Check(ex.Describe(), traces.All(log.Events()))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != checker.Violated || r.Err.Premise != "WAKE of a QUEUED or NOTIFIED task coalesces (idempotent)" {
		t.Fatalf("broken executor: verdict %s, want the duplicate enqueue caught\n%s", r.Verdict, r.Summary())
	}
	t.Log(r.Err.Msg)
}
