package executor

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execspec/execspec/executor/internal/eventbuf"
	"github.com/execspec/execspec/traces"
)

// logRecorder is a traces.Log that counts how events reach it.
type logRecorder struct {
	traces.Log
	batches, singles, inBatches atomic.Int64
}

func (r *logRecorder) RecordPacked(b []traces.Packed) {
	r.batches.Add(1)
	r.inBatches.Add(int64(len(b)))
	r.Log.RecordPacked(b)
}

func (r *logRecorder) Record(e traces.Event) {
	r.singles.Add(1)
	r.Log.Record(e)
}

// batchedBuiltins runs test for every built-in executor that hands its
// events over in batches (all but Monitored, a Recorder itself), on a fresh
// one recording into a logRecorder. The executor is closed afterwards.
func batchedBuiltins(t *testing.T, test func(t *testing.T, ex Executor, rec *logRecorder)) {
	for _, name := range BuiltinNames() {
		if name == "monitored" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			newEx, _ := Builtin(name)
			ex := newEx()
			defer ex.Close()
			rec := &logRecorder{}
			ex.(Reporter).SetRecorder(rec)
			test(t, ex, rec)
		})
	}
}

// TestWorkloadsBatched runs the shared table of workloads on every built-in
// executor recording into a BatchRecorder, so that events reach it in
// batches, and checks the events as TestWorkloads does.
func TestWorkloadsBatched(t *testing.T) {
	for _, name := range BuiltinNames() {
		newEx, _ := Builtin(name)
		t.Run(name, func(t *testing.T) {
			runWorkloads(t, newEx, func() (Recorder, func() []traces.Event) {
				rec := &logRecorder{}
				return rec, rec.Events
			})
		})
	}
}

// TestBatchesAreBatches: a BatchRecorder gets the events of trivial tasks in
// batches, not one call per event, and gets every one of them by the time
// Wait returns.
func TestBatchesAreBatches(t *testing.T) {
	batchedBuiltins(t, func(t *testing.T, ex Executor, rec *logRecorder) {
		const n = 5000
		for range n {
			if _, err := ex.Spawn(trivial); err != nil {
				t.Fatal(err)
			}
		}
		if err := ex.Wait(); err != nil {
			t.Fatal(err)
		}
		if err := checkEvents(describe(ex), rec.Events(), n, true); err != nil {
			t.Fatal(err)
		}
		b, in := rec.batches.Load(), rec.inBatches.Load()
		if rec.singles.Load() != 0 || in < 4*n || b > in/8 {
			t.Fatalf("%d events in %d batches and %d one by one; want at least %d, in batches of 8 or more on average",
				in, b, rec.singles.Load(), 4*n)
		}
	})
}

// TestBatchedCompleteAtWait: when Wait returns, every event of the tasks it
// waited for is in the recorder, including the wakes from goroutines
// outside the executor and the ends of polls on other workers that let the
// last task finish. Round after round, with no pause between them.
func TestBatchedCompleteAtWait(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 20
	}
	// Workers dawdle before they park (which hands their events over), so
	// that Wait returns while their last events are still their own; and a
	// wake from outside dawdles between its effect and its event, while the
	// task it woke runs on and finishes.
	var inWake atomic.Bool
	testHookIdle = func() { time.Sleep(100 * time.Microsecond) }
	testHookWoke = func() {
		inWake.Store(true)
		time.Sleep(200 * time.Microsecond)
		inWake.Store(false)
	}
	defer func() { testHookIdle, testHookWoke = nil, nil }()
	batchedBuiltins(t, func(t *testing.T, ex Executor, rec *logRecorder) {
		total := 0
		for round := range rounds {
			// The task registers its waker and returns Pending once,
			// after a goroutine outside has woken it: the wake finds
			// it RUNNING (NOTIFIED), and the task runs again and
			// finishes while the wake is still in the hook. One task
			// per round, so that inWake is about it.
			const n = 1
			wakers := make(chan Waker, n)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range n {
					w := <-wakers
					w.Wake()
					w.Wake() // coalesced or late: recorded too
				}
			}()
			for range n {
				polled := false
				_, err := ex.Spawn(FutureFunc(func(cx *Context) (any, bool) {
					if polled {
						return nil, true
					}
					polled = true
					wakers <- cx.Waker()
					for end := time.Now().Add(50 * time.Millisecond); !inWake.Load() && time.Now().Before(end); {
						time.Sleep(10 * time.Microsecond)
					}
					return nil, false
				}))
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := ex.Wait(); err != nil {
				t.Fatal(err)
			}
			total += n
			// The trace is checked before the waking goroutine is
			// known to be done: only the second wakes may be missing.
			evs := rec.Events()
			if err := checkEvents(describe(ex), evs, total, true); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			// Each task finished because of its first wake: that wake
			// is in the trace, before the task's end.
			woken := map[int64]bool{}
			for _, e := range evs {
				switch {
				case e.Kind == traces.KindWake:
					woken[e.Task] = true
				case e.Kind == traces.KindPollEnd && e.Result == traces.ResultReady && !woken[e.Task]:
					t.Fatalf("round %d: task %d ended at seq %d, and the trace shows no wake before", round, e.Task, e.Seq)
				}
			}
			wg.Wait()
		}
	})
}

// TestBatchedDeliveredWhenIdle: events reach a BatchRecorder when the
// workers run out of work, without Wait: a task that is never woken again
// leaves a trace that shows it.
func TestBatchedDeliveredWhenIdle(t *testing.T) {
	batchedBuiltins(t, func(t *testing.T, ex Executor, rec *logRecorder) {
		var wk atomic.Pointer[Waker]
		_, err := ex.Spawn(FutureFunc(func(cx *Context) (any, bool) {
			if wk.Load() != nil {
				return nil, true
			}
			w := cx.Waker()
			wk.Store(&w)
			return nil, false
		}))
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			kinds := map[traces.Kind]int{}
			for _, e := range rec.Events() {
				kinds[e.Kind]++
			}
			if kinds[traces.KindSpawn] == 1 && kinds[traces.KindTake] == 1 && kinds[traces.KindPollEnd] == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("events of an idle executor not in the recorder: %v", kinds)
			}
			time.Sleep(time.Millisecond)
		}
		(*wk.Load()).Wake()
		if err := ex.Close(); err != nil {
			t.Fatal(err)
		}
		if err := checkEvents(describe(ex), rec.Events(), 1, true); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPackedRoundTripOfRecordedEvents: every event a built-in executor
// records (but panics, which carry text) packs and unpacks to itself.
func TestPackedRoundTripOfRecordedEvents(t *testing.T) {
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			newEx, _ := Builtin(name)
			rec := &traces.Log{}
			w := workloads[0]
			if err := runWith(newEx, rec, rec.Events, w, plainEnv(), 20*time.Second); err != nil {
				t.Fatal(err)
			}
			for _, e := range rec.Events() {
				if e.Kind == traces.KindPanic {
					continue
				}
				p, ok := traces.Pack(e)
				if !ok || p.Event() != e {
					t.Fatalf("%+v does not pack to itself (ok %v): %+v", e, ok, p.Event())
				}
			}
		})
	}
}

// TestWaitIgnoresNewTasks: Wait does not wait for a task spawned after it
// saw every earlier task DONE, not even to collect events: here that task's
// poll waits for Wait to return.
func TestWaitIgnoresNewTasks(t *testing.T) {
	batchedBuiltins(t, func(t *testing.T, ex Executor, rec *logRecorder) {
		if _, err := ex.Spawn(trivial); err != nil {
			t.Fatal(err)
		}
		returned := make(chan struct{})
		begun := make(chan struct{})
		testHookWaited = func() {
			testHookWaited = nil // once: the hook runs in this goroutine only
			_, err := ex.Spawn(FutureFunc(func(*Context) (any, bool) {
				close(begun)
				<-returned
				return nil, true
			}))
			if err != nil {
				t.Error(err)
				return
			}
			<-begun
		}
		defer func() { testHookWaited = nil }()
		done := make(chan error, 1)
		go func() { done <- ex.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			close(returned)
			t.Fatal("Wait waited for a task spawned after it saw every task DONE")
		}
		close(returned)
	})
}

// TestWaitWaitsForBatchInTransit: a batch of pushes from outside that is on
// its way to the recorder when Wait looks is in the recorder when Wait
// returns.
func TestWaitWaitsForBatchInTransit(t *testing.T) {
	batchedBuiltins(t, func(t *testing.T, ex Executor, rec *logRecorder) {
		// Keep every worker busy, so that none goes idle (and hands the
		// queue's buffer over) while the buffer fills.
		workers := describe(ex).Workers
		release := make(chan struct{})
		var released sync.Once
		free := func() { released.Do(func() { close(release) }) }
		var begun sync.WaitGroup
		begun.Add(workers)
		for range workers {
			_, err := ex.Spawn(FutureFunc(func(*Context) (any, bool) {
				begun.Done()
				<-release
				return nil, true
			}))
			if err != nil {
				t.Fatal(err)
			}
		}
		begun.Wait()
		inTransit, waited := make(chan struct{}), make(chan struct{})
		var first atomic.Bool
		eventbuf.TestHookHandOver = func(events int) {
			if events > 0 && first.CompareAndSwap(false, true) {
				close(inTransit)
				<-waited // until Wait is about to collect the buffers
				time.Sleep(20 * time.Millisecond)
			}
		}
		testHookWaited = func() { close(waited) }
		defer func() {
			// The workers read the hooks: stop them first.
			free()
			ex.Close()
			eventbuf.TestHookHandOver, testHookWaited = nil, nil
		}()
		spawned := make(chan int, 1)
		go func() {
			n := workers
			defer func() { spawned <- n }()
			for n < 2*eventbuf.Cap { // the push that fills the buffer hands it over
				if _, err := ex.Spawn(trivial); err != nil {
					t.Error(err)
					return
				}
				n++
				select {
				case <-inTransit:
					return
				default:
				}
			}
		}()
		select {
		case <-inTransit:
		case n := <-spawned:
			t.Fatalf("no batch handed over after %d spawns", n)
		}
		free()
		if err := ex.Wait(); err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, e := range rec.Events() {
			if e.Kind == traces.KindSpawn {
				got++
			}
		}
		if n := <-spawned; got != n {
			t.Fatalf("%d spawns in the trace when Wait returned, want %d", got, n)
		}
	})
}

// TestLateWakeAfterClose: a wake of a finished task after Close is in the
// recorder when Wake returns (nothing else would hand it over), and
// counted in LateWakes; for an executor whose Close records a stop (format
// v1.1) it comes after the stop, which a trace allows after an orderly
// stop (a waker may outlive its executor).
func TestLateWakeAfterClose(t *testing.T) {
	batchedBuiltins(t, func(t *testing.T, ex Executor, rec *logRecorder) {
		var wk Waker
		if _, err := ex.Spawn(FutureFunc(func(cx *Context) (any, bool) {
			wk = cx.Waker()
			return nil, true
		})); err != nil {
			t.Fatal(err)
		}
		if err := ex.Close(); err != nil {
			t.Fatal(err)
		}
		wk.Wake()
		late := 0
		evs := rec.Events()
		for _, e := range evs {
			if e.Kind == traces.KindWake && e.Outcome == traces.OutcomeLate {
				late++
			}
		}
		if ex.(Describer).Describe().Minor == 1 {
			if stop := evs[len(evs)-2]; late != 1 || stop.Kind != traces.KindStop || ex.(interface{ LateWakes() int64 }).LateWakes() != 1 {
				t.Fatalf("%d late wakes in the trace, next to last event %v, %d late wakes counted; want 1, the stop, 1", late, stop.Kind, ex.(interface{ LateWakes() int64 }).LateWakes())
			}
			return
		}
		if late != 1 {
			t.Fatalf("%d late wakes in the trace, want 1", late)
		}
	})
}
