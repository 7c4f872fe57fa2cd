package executor_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// markedFIFO is the smallest executor on a Kit, a FIFO queue and a loop,
// that reports its events: it marks its pushes and takes (Kit.Pushed,
// Kit.Took), unless unmarked; with into set, it marks them as pushes onto
// that queue and takes from src (PushedTo, TookFrom).
type markedFIFO struct {
	kit      *executor.Kit
	mu       sync.Mutex
	q        []*executor.JoinHandle
	unmarked bool
	into     traces.Queue
	src      traces.Source
	victim   int
}

func newMarkedFIFO(workers int, rec executor.Recorder) *markedFIFO {
	e := &markedFIFO{}
	e.kit = executor.NewKit(executor.KitConfig{Workers: workers, Schedule: e.push, Work: e.work, Recorder: rec})
	return e
}

// newUnmarkedFIFO returns a markedFIFO that marks nothing and records
// nothing: the Kit makes every transition itself.
func newUnmarkedFIFO(workers int) *markedFIFO {
	e := newMarkedFIFO(workers, nil)
	e.unmarked = true
	return e
}

func (e *markedFIFO) Spawn(f executor.Future) (executor.Handle, error) { return e.kit.Spawn(f) }
func (e *markedFIFO) Wait() error                                      { return e.kit.Wait() }
func (e *markedFIFO) Close() error                                     { return e.kit.Close() }
func (e *markedFIFO) SetRecorder(r executor.Recorder)                  { e.kit.SetRecorder(r) }
func (e *markedFIFO) Describe() traces.Header                          { return e.kit.Header("marked", "fifo") }

func (e *markedFIFO) push(t *executor.JoinHandle) {
	e.mu.Lock()
	e.q = append(e.q, t)
	switch {
	case e.into != traces.QueueNone:
		e.kit.PushedTo(t, e.into)
	case !e.unmarked:
		e.kit.Pushed(t)
	}
	e.mu.Unlock()
	e.kit.Notify()
}

func (e *markedFIFO) hasWork() bool { e.mu.Lock(); defer e.mu.Unlock(); return len(e.q) > 0 }

func (e *markedFIFO) pop(w int) (t *executor.JoinHandle) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.q) > 0 {
		t, e.q = e.q[0], e.q[1:]
		switch {
		case e.into != traces.QueueNone:
			e.kit.TookFrom(t, w, e.src, e.victim)
		case !e.unmarked:
			e.kit.Took(t, w)
		}
	}
	return t
}

func (e *markedFIFO) work(w int) { e.kit.Loop(w, e.pop, e.hasWork) }

// kitJobs spawns n futures on ex: Pending a few times (woken by themselves,
// or twice at once from outside, after Context.Register or not), then Ready, a
// Failed value, a panic or a Goexit; and waits for them.
func kitJobs(t *testing.T, ex executor.Executor, n int) {
	t.Helper()
	// Two goroutines outside wake each handed waker at once: wakes of one
	// WAITING task race.
	out := make(chan executor.Waker, n*4)
	var outDone sync.WaitGroup
	for range 2 {
		outDone.Add(1)
		go func() {
			defer outDone.Done()
			for k := range out {
				k.Wake()
			}
		}()
	}
	for i := range n {
		pend := i % 4
		ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
			if pend > 0 {
				pend--
				switch pend % 3 {
				case 0:
					cx.Waker().Wake()
				case 1:
					k := cx.Register()
					out <- k
					out <- k
				default:
					out <- cx.Waker().Clone()
					out <- cx.Waker().Clone()
				}
				return nil, false
			}
			switch i % 23 {
			case 3:
				return executor.Failed{Err: errors.New("failed")}, true
			case 7:
				panic("kit job panics")
			case 11:
				runtime.Goexit()
			}
			return i, true
		}))
	}
	done := make(chan error, 1)
	go func() { done <- ex.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the jobs did not finish in 20s")
	}
	close(out)
	outDone.Wait()
}

func kitConforms(t *testing.T, h traces.Header, evs []traces.Event) *conform.Report {
	t.Helper()
	r, err := conform.Check(h, traces.All(evs))
	if err != nil {
		t.Fatalf("header %+v: %v", h, err)
	}
	return r
}

// TestKitRecords: an executor on a Kit that marks its pushes and takes
// records traces that conform to its policy, with every task's spawn, end,
// panic and register in them, over runs with 1, 2 and 4 workers; the
// recorder is set through KitConfig, and the events reach a BatchRecorder
// (traces.Log) through Record.
func TestKitRecords(t *testing.T) {
	const n = 60
	for i := range 45 {
		workers := []int{1, 2, 4}[i%3]
		var log traces.Log
		e := newMarkedFIFO(workers, &log)
		kitJobs(t, e, n)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		evs := log.Events()
		r := kitConforms(t, e.Describe(), evs)
		if r.Verdict != checker.Holds {
			if r.Err != nil {
				t.Fatalf("run %d (%d workers): %s\nstate:\n%s", i, workers, r.Err.Msg, r.Err.State)
			}
			t.Fatalf("run %d (%d workers): %s", i, workers, r.Summary())
		}
		count := map[traces.Kind]int{}
		for _, ev := range evs {
			count[ev.Kind]++
		}
		fails := 0
		for j := range n {
			if j%23 == 3 || j%23 == 7 || j%23 == 11 {
				fails++
			}
		}
		if r.Tasks != n || count[traces.KindSpawn] != n || count[traces.KindPanic] != fails || count[traces.KindRegister] == 0 || count[traces.KindRequeue]+count[traces.KindWake] == 0 {
			t.Fatalf("run %d: %d tasks, events by kind %v; want %d tasks and spawns, %d panics, some registers, wakes and re-queues", i, r.Tasks, count, n, fails)
		}
	}
}

// TestKitRecordsUnmarked: an executor that reports events but marks no push
// and no take still runs every task to its end (the Kit makes the
// transitions after Schedule and in Run), and its trace, recorded outside
// the queue's critical sections, is caught out of order with several
// workers.
func TestKitRecordsUnmarked(t *testing.T) {
	caught := 0
	for range 20 {
		var log traces.Log
		e := newMarkedFIFO(4, &log)
		e.unmarked = true
		kitJobs(t, e, 60)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if r := kitConforms(t, e.Describe(), log.Events()); r.Verdict == checker.Violated {
			caught++
		}
	}
	t.Logf("%d of 20 unmarked runs caught", caught)
}

// TestKitNoRecorder: with no recorder, the marks are a nil check and the
// Kit runs as before (no events, every task done).
func TestKitNoRecorder(t *testing.T) {
	e := newMarkedFIFO(2, nil)
	kitJobs(t, e, 200)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	var nilRec executor.Recorder
	e2 := newMarkedFIFO(1, nilRec)
	e2.SetRecorder(nil)
	kitJobs(t, e2, 10)
	if err := e2.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestKitRecordsQueues: PushedTo and TookFrom record the queue, the source
// and the victim they are given, on every push (spawn, scheduling wake,
// re-queue) and every take.
func TestKitRecordsQueues(t *testing.T) {
	for _, c := range []struct {
		into   traces.Queue
		src    traces.Source
		victim int
	}{
		{traces.LocalQueue(0), traces.SourceLocal, -1},
		{traces.LocalQueue(1), traces.SourceSteal, 1},
	} {
		var log traces.Log
		e := newMarkedFIFO(1, &log)
		e.into, e.src, e.victim = c.into, c.src, c.victim
		kitJobs(t, e, 40)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		pushes, takes := 0, 0
		for _, ev := range log.Events() {
			switch {
			case ev.Kind == traces.KindSpawn || ev.Kind == traces.KindRequeue || ev.Kind == traces.KindWake && ev.Outcome == traces.OutcomeScheduled:
				pushes++
				if ev.Queue != c.into {
					t.Errorf("%v of t%d onto queue %d, want %d", ev.Kind, ev.Task, ev.Queue, c.into)
				}
			case ev.Kind == traces.KindTake:
				takes++
				if ev.Source != c.src || int(ev.Victim) != c.victim {
					t.Errorf("take of t%d from %v (victim %d), want %v (victim %d)", ev.Task, ev.Source, ev.Victim, c.src, c.victim)
				}
			}
		}
		if pushes < 40 || takes < pushes {
			t.Errorf("%d pushes and %d takes recorded, want at least 40 pushes, and a take for each", pushes, takes)
		}
	}
}
