package coverage

import (
	"context"
	"testing"

	"github.com/execspec/execspec/model"
)

// Random controlled runs of the work-stealing executor, with register
// events and wakes from worker threads, reach NOTIFIED and local-queue
// states, and no visited state is outside the model.
func TestCoverWorkSteal(t *testing.T) {
	res, err := Run(context.Background(), Config{Runs: 300, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	t.Logf("\n%s", r)
	if r.Outside != 0 || res.FirstFailure != nil {
		t.Fatalf("%d runs outside the model: %v", r.Outside, res.FirstFailure)
	}
	fired := map[string]int64{}
	for _, v := range r.Variants {
		fired[v.Variant] = v.Fired
	}
	for _, v := range []string{"WAKE notified (RUNNING → NOTIFIED)", "POLL-LOCAL", "WAKE scheduled onto local", "TASK-SUSPEND NOTIFIED, re-queued onto local"} {
		if fired[v] == 0 {
			t.Errorf("%s never fired", v)
		}
	}
	if r.StatePercent() < 30 {
		t.Errorf("only %.1f%% of the states", r.StatePercent())
	}
}

func TestCoverOtherExecutors(t *testing.T) {
	for _, name := range []string{"fifo", "wakeable", "timeslice"} {
		res, err := Run(context.Background(), Config{Executor: name, Model: model.Config{Tasks: 2}, Runs: 50})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Report.Outside != 0 || res.Report.VisitedStates < 5 {
			t.Errorf("%s: %d outside, %d visited: %v", name, res.Report.Outside, res.Report.VisitedStates, res.FirstFailure)
		}
	}
}

// The guided strategy realizes the model checker's paths on the real
// executor: on the reference configuration it reaches nearly every state
// the executor can reach in a few thousand runs, where random schedules
// stall well below.
func TestCoverGuided(t *testing.T) {
	runs := 4000
	if testing.Short() {
		runs = 1500
	}
	g, err := Run(context.Background(), Config{Strategy: "guided", Runs: runs, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), Config{Strategy: "random", Runs: runs, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	gp, rp := g.Report.StatePercent(), r.Report.StatePercent()
	t.Logf("%d runs: guided %.1f%% states %.1f%% transitions; random %.1f%% %.1f%%", runs, gp, g.Report.TransitionPercent(), rp, r.Report.TransitionPercent())
	if g.Report.Outside != 0 || g.FirstFailure != nil {
		t.Fatalf("guided: %v", g.FirstFailure)
	}
	if gp < 85 || gp <= rp+5 {
		t.Errorf("guided reached %.1f%% of the states, random %.1f%%", gp, rp)
	}
}
