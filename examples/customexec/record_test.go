package customexec_test

import (
	"sync"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/checker/lin"
	"github.com/execspec/execspec/examples/customexec"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// outside wakes, from a goroutine of its own, the wakers tasks hand it:
// before, during or after the poll that registered them.
type outside struct {
	ch   chan executor.Waker
	done sync.WaitGroup
}

func newOutside() *outside {
	o := &outside{ch: make(chan executor.Waker, 4096)}
	o.done.Add(1)
	go func() {
		defer o.done.Done()
		i := 0
		for k := range o.ch {
			k.Wake()
			if i++; i%3 == 0 {
				k.Clone().Wake() // a second wake: coalesced or late
			}
		}
	}()
	return o
}

func (o *outside) stop() { close(o.ch); o.done.Wait() }

// job returns Pending pendings times, each time arranging one wake: its own
// waker during the poll (self), or through the outside goroutine, after
// declaring the registration (Context.Register) every other time; then it
// may await another task, spawn children, and returns Ready or panics.
type job struct {
	ex       executor.Executor
	out      *outside
	pendings int
	self     bool
	children int
	panics   bool
	await    executor.Handle
}

func (j *job) Poll(cx *executor.Context) (any, bool) {
	if j.pendings > 0 {
		j.pendings--
		switch {
		case j.self:
			cx.Waker().Wake()
		case j.pendings%2 == 0:
			j.out.ch <- cx.Register().Clone()
		default:
			j.out.ch <- cx.Waker().Clone()
		}
		return nil, false
	}
	if j.await != nil {
		if _, ok := j.await.Poll(cx); !ok {
			return nil, false
		}
		j.await = nil
	}
	for range j.children {
		j.ex.Spawn(&job{ex: j.ex, out: j.out, pendings: 1, self: true})
	}
	j.children = 0
	if j.panics {
		panic("job panics")
	}
	return 1, true
}

// run spawns n jobs of every shape on ex, which must report its events,
// waits for them (and their children), closes it and returns its trace.
func run(t *testing.T, ex executor.Executor, n int) (traces.Header, []traces.Event) {
	t.Helper()
	var log traces.Log
	ex.(executor.Reporter).SetRecorder(&log)
	out := newOutside()
	var first executor.Handle
	for i := range n {
		j := &job{ex: ex, out: out, pendings: 1 + i%3, self: i%4 == 0, children: i % 7 / 6, panics: i%13 == 5}
		if i%5 == 2 {
			j.await = first
		}
		h, err := ex.Spawn(j)
		if err != nil {
			t.Fatalf("spawn: %v", err)
		}
		if first == nil {
			first = h
		}
	}
	done := make(chan error, 1)
	go func() {
		if err := ex.Wait(); err != nil {
			done <- err
			return
		}
		done <- ex.Close()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("close: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the jobs did not finish in 20s")
	}
	out.stop()
	return ex.(executor.Describer).Describe(), log.Events()
}

// replay replays a trace through the model of its header's policy.
func replay(t *testing.T, h traces.Header, evs []traces.Event) *conform.Report {
	t.Helper()
	r, err := conform.Check(h, traces.All(evs))
	if err != nil {
		t.Fatalf("header %+v: %v", h, err)
	}
	return r
}

// TestConformance: the traces customexec records, over many runs with 1, 2
// and 4 workers, conform to the model's "fifo" policy, their histories
// are linearizable (FIFO queue, task state words), and they hold every
// event of every job.
func TestConformance(t *testing.T) {
	runs, n := 200, 60
	if testing.Short() {
		runs = 30
	}
	for i := range runs {
		workers := []int{1, 2, 4}[i%3]
		h, evs := run(t, customexec.New(workers), n)
		if h.Policy != "fifo" || h.Workers != workers {
			t.Fatalf("header %+v: want policy fifo, %d workers", h, workers)
		}
		r := replay(t, h, evs)
		if r.Verdict != checker.Holds {
			if r.Err != nil {
				t.Fatalf("run %d (%d workers): %s\nstate:\n%s", i, workers, r.Err.Msg, r.Err.State)
			}
			t.Fatalf("run %d (%d workers): %s", i, workers, r.Summary())
		}
		lr, err := lin.Check(h, evs, lin.Options{Budget: 5 * time.Second, Complete: true})
		if err != nil || lr.Verdict != checker.Holds {
			t.Fatalf("run %d (%d workers): linearizability %v (%v):\n%s", i, workers, lr.Verdict, err, lr.Summary())
		}
		if r.Tasks < n {
			t.Fatalf("run %d: the trace has %d tasks, want at least %d", i, r.Tasks, n)
		}
		if i == 0 {
			t.Logf("%d events, %d tasks, %d panics; linearizability: %d operations, %v", r.Events, r.Tasks, len(r.Panics), lr.Ops, lr.Elapsed)
		}
	}
}

// doublePush is customexec with a bug: it pushes every spawned task twice
// (and marks the push once, as a Schedule that pushes twice would). One
// worker, so that the two copies are never polled at once; a copy of a
// task already DONE is dropped, so that the run ends.
type doublePush struct {
	kit *executor.Kit
	mu  sync.Mutex
	q   []*executor.JoinHandle
	in  map[*executor.JoinHandle]bool // spawned already
}

func newDoublePush() *doublePush {
	e := &doublePush{in: map[*executor.JoinHandle]bool{}}
	e.kit = executor.NewKit(executor.KitConfig{Workers: 1, Schedule: e.push, Work: e.work})
	return e
}

func (e *doublePush) Spawn(f executor.Future) (executor.Handle, error) { return e.kit.Spawn(f) }
func (e *doublePush) Wait() error                                      { return e.kit.Wait() }
func (e *doublePush) Close() error                                     { return e.kit.Close() }
func (e *doublePush) SetRecorder(r executor.Recorder)                  { e.kit.SetRecorder(r) }
func (e *doublePush) Describe() traces.Header                          { return e.kit.Header("doublepush", "fifo") }

func (e *doublePush) push(t *executor.JoinHandle) {
	e.mu.Lock()
	e.q = append(e.q, t)
	if !e.in[t] {
		e.in[t] = true
		e.q = append(e.q, t) // the bug
	}
	e.kit.Pushed(t)
	e.mu.Unlock()
	e.kit.Notify()
}

func (e *doublePush) pop(w int) (t *executor.JoinHandle) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for len(e.q) > 0 {
		t, e.q = e.q[0], e.q[1:]
		if _, done := t.Poll(executor.NewContext(executor.Waker{}, -1)); !done {
			e.kit.Took(t, w)
			return t
		}
	}
	return nil
}

func (e *doublePush) hasWork() bool { e.mu.Lock(); defer e.mu.Unlock(); return len(e.q) > 0 }

func (e *doublePush) work(w int) { e.kit.Loop(w, e.pop, e.hasWork) }

// TestConformanceCatchesDoublePush: conformance and linearizability catch
// a Kit-based executor that pushes a task twice, in every run.
func TestConformanceCatchesDoublePush(t *testing.T) {
	for i := range 5 {
		h, evs := run(t, newDoublePush(), 40)
		r := replay(t, h, evs)
		if r.Verdict != checker.Violated {
			t.Fatalf("run %d: verdict %v on an executor that pushes every task twice: %s", i, r.Verdict, r.Summary())
		}
		lr, err := lin.Check(h, evs, lin.Options{Budget: 5 * time.Second, Complete: true})
		if err != nil || lr.Verdict != checker.Violated {
			t.Fatalf("run %d: linearizability %v (%v) on an executor that pushes every task twice", i, lr.Verdict, err)
		}
		if i == 0 && r.Err != nil {
			t.Logf("caught: %s; linearizability:\n%s", r.Err.Msg, lr.Summary())
		}
	}
}
