package executor_test

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// checkV11 writes the run's trace as JSON lines, reads it back (so that
// what is checked is what `verify check` reads) and checks it.
func checkV11(t *testing.T, h traces.Header, events []traces.Event) (*conform.Report, []traces.Event) {
	t.Helper()
	var buf bytes.Buffer
	if err := traces.WriteAll(&buf, h, events); err != nil {
		t.Fatalf("write: %v", err)
	}
	h2, evs, err := traces.ReadAll(&buf, "run.jsonl")
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if h2.Minor != 1 {
		t.Fatalf("header minor %d, want 1 (format v1.1)", h2.Minor)
	}
	r, err := conform.Check(h2, traces.All(evs))
	if err != nil {
		t.Fatal(err)
	}
	return r, evs
}

// starve runs, on ex, three high-priority tasks that wake themselves and
// count their polls only once a low-priority task is queued, and that low
// task: with one worker a high task is always queued while the low one
// waits, so without aging the low one waits for all 3·polls of them.
func starve(t *testing.T, ex *executor.Priority, polls int) []traces.Event {
	t.Helper()
	var log traces.Log
	ex.SetRecorder(&log)
	var lowQueued atomic.Bool
	for range 3 {
		n := 0
		_, err := ex.SpawnPriority(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
			if lowQueued.Load() {
				if n++; n == polls {
					return nil, true
				}
			}
			cx.Waker().Wake()
			return nil, false
		}), 5)
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ex.SpawnPriority(executor.FutureFunc(func(*executor.Context) (any, bool) { return 0, true }), 0); err != nil {
		t.Fatal(err)
	}
	lowQueued.Store(true)
	// Equal priorities queued together, for the order among ties.
	for i := range 6 {
		if _, err := ex.SpawnPriority(executor.FutureFunc(func(*executor.Context) (any, bool) { return i, true }), 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	return log.Events()
}

// The priority executor's traces are v1.1: every spawn carries its
// priority, the header declares its aging, so the checker checks every
// take against the model's pick (PriorityUnchecked is false), and the run
// ends in a stop.
func TestPriorityTraceChecked(t *testing.T) {
	for _, c := range []executor.PriorityConfig{
		{Workers: 1, Aging: 2},
		{Workers: 1, Aging: -1}, // no aging: the order is still checked
		{Workers: 3, Aging: 1, MaxPriority: 3},
	} {
		ex := executor.NewPriority(c)
		h := ex.Describe()
		r, evs := checkV11(t, h, starve(t, ex, 20))
		if r.Verdict != checker.Holds {
			t.Fatalf("%+v: %s", c, r.Summary())
		}
		if r.PriorityUnchecked {
			t.Fatalf("%+v: the take order was not checked", c)
		}
		if !r.Stopped || evs[len(evs)-1].Kind != traces.KindStop {
			t.Fatalf("%+v: the trace does not end in a stop", c)
		}
		spawns := 0
		for _, e := range evs {
			if e.Kind == traces.KindSpawn {
				spawns++
				if !e.Prioritized {
					t.Fatalf("%+v: spawn without a priority: %s", c, traces.FormatEvent(e))
				}
			}
		}
		if spawns != 10 || h.Config["aging"] != max(c.Aging, 0) {
			t.Fatalf("%+v: %d spawns, aging %d in the header", c, spawns, h.Config["aging"])
		}
	}
}

// A priority executor that does not age, or that breaks ties the wrong
// way, is caught at the take that departs from the model's pick, with the
// rule and what should have run instead.
func TestBrokenPriorityCaught(t *testing.T) {
	for _, c := range []struct{ bug, want string }{
		{"no-aging", "was passed over"},
		{"ties-lifo", "is first of the highest priority"},
	} {
		t.Run(c.bug, func(t *testing.T) {
			ex := executor.NewBrokenPriority(executor.PriorityConfig{Aging: 2}, c.bug)
			r, _ := checkV11(t, ex.Describe(), starve(t, ex, 20))
			if r.Verdict != checker.Violated || r.Err == nil {
				t.Fatalf("not caught: %s", r.Summary())
			}
			if r.Err.Rule != model.GLOBAL_STEAL || r.Err.Event.Kind != traces.KindTake || !strings.Contains(r.Err.Reason, c.want) {
				t.Fatalf("caught as %s at %s: %s; want GLOBAL-STEAL at a take, saying %q", r.Err.Rule, traces.FormatEvent(r.Err.Event), r.Err.Reason, c.want)
			}
			t.Logf("caught: %s", r.Err.Msg)
		})
	}
}

// retryRun runs tasks that fail (panic, or return a Failed value) a few
// times before they succeed, some more often than the retries allow.
func retryRun(t *testing.T, ex *executor.Retry) []traces.Event {
	t.Helper()
	var log traces.Log
	ex.SetRecorder(&log)
	for i := range 30 {
		attempts := 0
		factory := func() executor.Future {
			attempts++
			a := attempts
			return executor.FutureFunc(func(cx *executor.Context) (any, bool) {
				switch {
				case a > i%4:
					return a, true
				case i%2 == 0:
					panic("attempt failed")
				}
				return executor.Failed{Err: errFailed}, true
			})
		}
		if _, err := ex.SpawnRetry(factory, -1); err != nil {
			t.Fatal(err)
		}
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	return log.Events()
}

var errFailed = errorString("failed")

type errorString string

func (e errorString) Error() string { return string(e) }

// The retry executor's traces are v1.1: every poll names its future, a
// new one per attempt; a Failed value ends a poll with result error.
func TestRetryTraceRecordsFutures(t *testing.T) {
	ex := executor.NewRetry(executor.RetryConfig{Workers: 2, Retries: 2})
	r, evs := checkV11(t, ex.Describe(), retryRun(t, ex))
	if r.Verdict != checker.Holds {
		t.Fatalf("%s", r.Summary())
	}
	maxFuture := int64(0)
	panicEvents, panicEnds := 0, 0
	for _, e := range evs {
		switch e.Kind {
		case traces.KindPollBegin, traces.KindPollEnd:
			if e.Future == 0 {
				t.Fatalf("poll without a future id: %s", traces.FormatEvent(e))
			}
			maxFuture = max(maxFuture, e.Future)
			if e.Result == traces.ResultPanic {
				panicEnds++
			}
		case traces.KindPanic:
			panicEvents++
		}
	}
	// A Failed value is an error, not a panic: no panic event of its own.
	if panicEvents != panicEnds || panicEnds == 0 {
		t.Fatalf("%d panic events for %d polls that panicked (and %d errors)", panicEvents, panicEnds, r.ErrorCount)
	}
	if maxFuture != 3 || r.ErrorCount == 0 || !r.Stopped {
		t.Fatalf("largest future id %d (want 3: two retries), %d errors, stopped %v", maxFuture, r.ErrorCount, r.Stopped)
	}
}

// A retry executor that re-polls the finished future is caught at that
// poll, under TASK-COMPLETE.
func TestBrokenRetryCaught(t *testing.T) {
	ex := executor.NewBrokenRetry(executor.RetryConfig{Retries: 2})
	r, _ := checkV11(t, ex.Describe(), retryRun(t, ex))
	if r.Verdict != checker.Violated || r.Err == nil {
		t.Fatalf("not caught: %s", r.Summary())
	}
	if r.Err.Rule != model.TASK_COMPLETE || r.Err.Event.Kind != traces.KindPollBegin || !strings.Contains(r.Err.Reason, "re-polls a finished future") {
		t.Fatalf("caught as %s at %s: %s", r.Err.Rule, traces.FormatEvent(r.Err.Event), r.Err.Reason)
	}
	t.Logf("caught: %s", r.Err.Msg)
}

// Close records the stop (an orderly one: reason shutdown); a wake after it
// (necessarily late: every task is DONE, the waker outlived the executor)
// is recorded after it and counted, and the trace conforms.
func TestCloseRecordsStop(t *testing.T) {
	ex := executor.NewPriority(executor.PriorityConfig{})
	var log traces.Log
	ex.SetRecorder(&log)
	var w executor.Waker
	h, err := ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
		w = cx.Waker().Clone()
		return 1, true
	}))
	if err != nil {
		t.Fatal(err)
	}
	h.Join()
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	w.Wake()
	evs := log.Events()
	stop, last := evs[len(evs)-2], evs[len(evs)-1]
	if stop.Kind != traces.KindStop || stop.Worker != -1 || stop.Reason != traces.StopShutdown || last.Kind != traces.KindWake || last.Outcome != traces.OutcomeLate {
		t.Fatalf("last events %s, %s: want the executor's stop, then the late wake", traces.FormatEvent(stop), traces.FormatEvent(last))
	}
	if ex.LateWakes() != 1 {
		t.Fatalf("%d late wakes, want 1", ex.LateWakes())
	}
	if r, _ := checkV11(t, ex.Describe(), evs); r.Verdict != checker.Holds || r.WakesAfterStop != 1 {
		t.Fatalf("wakes after the stop %d, want 1:\n%s", r.WakesAfterStop, r.Summary())
	}
}
