package cover

import (
	"strings"
	"testing"

	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// prioHeader is the v1.1 header of a priority executor with aging 2.
func prioHeader(minor int) traces.Header {
	return traces.Header{Format: traces.Format, Version: traces.Version, Minor: minor, Executor: "priority", Workers: 1,
		Policy: "priority", Config: map[string]int{"aging": 2, "max-priority": 7}}
}

// prioRun is a run of two tasks of priorities 0 and 1 (the closed
// configuration's) on one worker: t2 runs first; a wake through a no-op
// waker, future ids and a stop, which project onto nothing.
func prioRun(p1, p2 int32, first int64) []traces.Event {
	second := 3 - first
	evs := []traces.Event{
		{Kind: traces.KindSpawn, Task: 1, Worker: -1, Queue: traces.QueueGlobal, Priority: p1, Prioritized: true},
		{Kind: traces.KindSpawn, Task: 2, Worker: -1, Queue: traces.QueueGlobal, Priority: p2, Prioritized: true},
		{Kind: traces.KindWake, Worker: -1},
		{Kind: traces.KindTake, Task: first, Worker: 0, Source: traces.SourceGlobal},
		{Kind: traces.KindPollBegin, Task: first, Worker: 0, Future: 1},
		{Kind: traces.KindPollEnd, Task: first, Worker: 0, Result: traces.ResultReady, Future: 1},
		{Kind: traces.KindTake, Task: second, Worker: 0, Source: traces.SourceGlobal},
		{Kind: traces.KindPollBegin, Task: second, Worker: 0, Future: 1},
		{Kind: traces.KindPollEnd, Task: second, Worker: 0, Result: traces.ResultReady, Future: 1},
		{Kind: traces.KindStop, Worker: -1},
	}
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
		evs[i].Victim = -1
	}
	return evs
}

// A v1.1 trace of a priority executor projects onto the closed priority
// policy: coverage, not an error; the v1.1 events that are no rule (a
// wake without a task, a stop) project onto nothing.
func TestCoverageProjectsPriorityV11(t *testing.T) {
	cfg := model.Config{Policy: model.Priority, Workers: 1, Tasks: 2, Pendings: 0, Aging: 2}
	sp := covSpace(t, cfg)
	mc, err := ClosedConfig(prioHeader(1), model.Config{Tasks: 2, Pendings: 0, Wakes: 1})
	if err != nil {
		t.Fatalf("ClosedConfig: %v", err)
	}
	if mc.Policy != model.Priority || mc.Aging != 2 {
		t.Fatalf("closed configuration %s, want the priority policy with aging 2", mc)
	}
	cv := New(sp)
	res := mustAdd(t, cv, prioHeader(1), prioRun(0, 1, 2))
	if res.Err != nil || res.Left != "" {
		t.Fatalf("err %v, left %q", res.Err, res.Left)
	}
	// spawn, spawn, take, complete, take, complete: six new states after
	// the initial one.
	if res.NewStates != 6 || res.Events != 10 {
		t.Fatalf("%d new states over %d events, want 6 over 10", res.NewStates, res.Events)
	}
	if rep := cv.Report(0); rep.Outside != 0 || len(rep.Failures) != 0 {
		t.Fatalf("report: %d outside, %d failures", rep.Outside, len(rep.Failures))
	}

	// Taking the lower priority first violates the open model: a failure.
	res = mustAdd(t, cv, prioHeader(1), prioRun(0, 1, 1))
	if ce, ok := res.Err.(*conform.Error); !ok || ce.Rule != model.GLOBAL_STEAL {
		t.Fatalf("want GLOBAL-STEAL's violation, got %v", res.Err)
	}

	// Priorities that are not the configuration's leave it.
	res = mustAdd(t, cv, prioHeader(1), prioRun(5, 1, 1))
	if res.Err != nil || !strings.Contains(res.Left, "spawned with priority 5") {
		t.Fatalf("want the run to leave the configuration, got err %v, left %q", res.Err, res.Left)
	}
}

// A v1.0 priority trace (no priorities), or one without aging, cannot be
// projected, and the error says why.
func TestCoveragePriorityRefused(t *testing.T) {
	sp := covSpace(t, model.Config{Policy: model.Priority, Workers: 1, Tasks: 2, Pendings: 0, Aging: 2})
	if _, err := New(sp).Add(prioHeader(0), traces.All(nil)); err == nil || !strings.Contains(err.Error(), "v1.0 trace does not say the tasks' priorities") {
		t.Fatalf("v1.0: %v", err)
	}
	h := prioHeader(1)
	h.Config["aging"] = 0
	if _, err := ClosedConfig(h, model.Config{Tasks: 2}); err == nil || !strings.Contains(err.Error(), "without aging") {
		t.Fatalf("aging 0: %v", err)
	}
}

// Spurious polls, where the header allows them, project onto the closed
// model: a busy re-queue and an in-place re-poll of a task that was not
// woken stand for a WAKE of its registration (and the take after it).
func TestCoverageSpuriousPolls(t *testing.T) {
	sp := covSpace(t, model.Config{Policy: model.FIFO, Workers: 1, Tasks: 1, Pendings: 2, Wakes: 1})
	h := traces.Header{Format: traces.Format, Version: traces.Version, Minor: 1, Executor: "busy", Workers: 1,
		Policy: "fifo", Config: map[string]int{"spurious-polls": 1}}
	evs := []traces.Event{
		{Kind: traces.KindSpawn, Task: 1, Worker: -1, Queue: traces.QueueGlobal},
		{Kind: traces.KindTake, Task: 1, Worker: 0, Source: traces.SourceGlobal},
		{Kind: traces.KindPollBegin, Task: 1, Worker: 0},
		{Kind: traces.KindPollEnd, Task: 1, Worker: 0, Result: traces.ResultPending},
		{Kind: traces.KindRequeue, Task: 1, Worker: 0, Queue: traces.QueueGlobal}, // busy re-queue
		{Kind: traces.KindTake, Task: 1, Worker: 0, Source: traces.SourceGlobal},
		{Kind: traces.KindPollBegin, Task: 1, Worker: 0},
		{Kind: traces.KindPollEnd, Task: 1, Worker: 0, Result: traces.ResultPending},
		{Kind: traces.KindPollBegin, Task: 1, Worker: 0}, // in-place re-poll
		{Kind: traces.KindPollEnd, Task: 1, Worker: 0, Result: traces.ResultReady},
		{Kind: traces.KindStop, Worker: -1},
	}
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
		evs[i].Victim = -1
	}
	cv := New(sp)
	res := mustAdd(t, cv, h, evs)
	if res.Err != nil || res.Left != "" || res.Events != len(evs) {
		t.Fatalf("err %v, left %q, %d events projected", res.Err, res.Left, res.Events)
	}
	if r := res.Conformance; r == nil || r.SpuriousPolls != 2 {
		t.Fatalf("conformance %+v: want 2 spurious polls", r)
	}
	if res.NewStates == 0 {
		t.Fatal("no state visited")
	}
}
