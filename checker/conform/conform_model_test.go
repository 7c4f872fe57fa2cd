package conform_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/checker/explore"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// walk returns a random run of the closed model of c, of at most n steps,
// as a counterexample (a path from the initial state).
func walk(t *testing.T, c model.Config, n int, seed uint64) *explore.Counterexample {
	m, err := model.New(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	s := m.Init()
	cx := &explore.Counterexample{Init: s.Clone(), Loop: -1}
	next := m.Init()
	for range n {
		var steps []model.Step
		var states []*model.State
		m.Next(s, next, func(st model.Step, ns *model.State, err error) bool {
			if err == nil {
				steps = append(steps, st)
				states = append(states, ns.Clone())
			}
			return true
		})
		if len(steps) == 0 {
			break
		}
		k := rng.IntN(len(steps))
		s = states[k]
		cx.Steps = append(cx.Steps, explore.CexStep{Step: steps[k], State: s})
	}
	return cx
}

// replay gives the events to a conformance checker of h until the first
// violation, and returns its report.
func replay(t *testing.T, h traces.Header, events []traces.Event) *conform.Report {
	t.Helper()
	c, err := conform.New(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if c.Step(e) != nil {
			break
		}
	}
	return c.Finish()
}

// Random runs of the correct model, written as traces the way the model
// checker writes its counterexamples, conform: the checker and the model
// agree on every policy.
func TestConformanceModelRuns(t *testing.T) {
	configs := []model.Config{
		{Policy: model.FIFO, Workers: 2, Tasks: 4, Pendings: 2},
		{Policy: model.WorkSteal, Workers: 2, Tasks: 4, Pendings: 1},
		{Policy: model.WorkSteal, Workers: 3, Tasks: 5, Pendings: 2, LocalCap: 1},
		{Policy: model.WorkSteal, Workers: 3, Tasks: 5, Pendings: 1, OwnerFIFO: true, StealHalf: true, LocalCap: 3},
		{Policy: model.WorkSteal, Workers: 2, Tasks: 4, Pendings: 2, GlobalInterval: 2},
		{Policy: model.Priority, Workers: 2, Tasks: 4, Pendings: 1},
		{Policy: model.TimeSlice, Workers: 2, Tasks: 3, Pendings: 3, Slice: 2},
		{Policy: model.Retry, Workers: 2, Tasks: 3, Pendings: 1, Retries: 2, Failures: 1},
		{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Endless: true},
	}
	for _, c := range configs {
		for seed := range uint64(20) {
			cx := walk(t, c, 200, seed)
			h := explore.HeaderOf(c)
			events := cx.Events()
			r := replay(t, h, events)
			if r.Verdict == checker.Violated {
				t.Fatalf("%s seed %d: a run of the model does not conform: %s\nstate:\n%s", c, seed, r.Err.Msg, r.Err.State)
			}
			last := cx.Steps[len(cx.Steps)-1].State
			if last.AllDone() != (r.Verdict == checker.Holds) {
				t.Fatalf("%s seed %d: verdict %s, but the run ends with every task DONE = %v\n%s", c, seed, r.Verdict, last.AllDone(), r.Summary())
			}
		}
	}
}

// The counterexamples of the broken variants of the model, written as the
// traces an executor with the bug would record, do not conform to the
// correct model: the checker finds the broken step, or the tasks a lost
// wakeup leaves behind.
func TestConformanceVariantCounterexamples(t *testing.T) {
	ws := model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1}
	none := []string{}
	for _, tc := range []struct {
		variant model.Variant
		inv     []string // invariants the model checker checks (none: the run goes on to the symptom)
		rule    model.Rule
	}{
		{model.LostWakeup, none, model.WAKE},           // the wake during the poll is recorded dropped
		{model.DuplicateEnqueue, none, model.WAKE},     // the wake of a QUEUED task is recorded scheduled
		{model.EnqueueWhileRunning, none, model.WAKE},  // the wake of a RUNNING task is recorded scheduled
		{model.StealOwnerEnd, nil, model.WORKER_STEAL}, // the thief takes the task the owner took
		{model.OverflowDrop, nil, model.WAKE},          // pushed onto a full local queue (the sequential search's shortest counterexample, whatever the core count)
	} {
		t.Run(string(tc.variant), func(t *testing.T) {
			c := ws
			c.Variant = tc.variant
			r, err := explore.Explore(context.Background(), c, explore.Options{Property: explore.Safety, Invariants: tc.inv})
			if err != nil || r.Verdict != checker.Violated {
				t.Fatalf("explore: %v %v", err, r.Verdict)
			}
			rep := replay(t, explore.HeaderOf(c), r.Counterexample.Events())
			if rep.Verdict != checker.Violated {
				t.Fatalf("verdict %s, want violated\n%s", rep.Verdict, rep.Summary())
			}
			if rep.Err.Rule != tc.rule {
				t.Errorf("violation of %s, want %s: %s", rep.Err.Rule, tc.rule, rep.Err.Msg)
			}
			t.Log(rep.Err.Msg)
		})
	}
}
