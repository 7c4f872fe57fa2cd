package explore

import (
	"context"
	"slices"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
)

// Every broken variant of the model is caught, by the property named here,
// with a shortest counterexample of the length named here (breadth-first
// search finds shortest safety counterexamples; the reference's SPIN
// breadth-first runs give the same lengths for duplicate-enqueue, 6, and
// enqueue-while-running, 4).
func TestVariantsCaught(t *testing.T) {
	ws := model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1}
	prio := model.Config{Policy: model.Priority, Workers: 1, Tasks: 2, Endless: true}
	none := []string{}
	cases := []struct {
		variant    model.Variant
		cfg        model.Config
		prop       Property
		invariants []string
		want       string // the property reported
		steps      int
		loop       int
	}{
		{model.LostWakeup, ws, Safety, nil, "no-lost-wakeup", 6, -1},
		// Without the invariant the lost wakeup still shows: the run gets
		// stuck with a task WAITING (the reference's 18-step deadlock).
		{model.LostWakeup, ws, Safety, none, model.NoStuckState, 18, -1},
		{model.LostWakeup, ws, EventuallyDone, none, string(EventuallyDone), 18, 18},
		{model.DuplicateEnqueue, ws, Safety, nil, "single-queue", 6, -1},
		{model.DuplicateEnqueue, ws, Safety, none, TakeQueuedOnly, 8, -1},
		{model.EnqueueWhileRunning, ws, Safety, nil, "single-queue", 4, -1},
		{model.StealOwnerEnd, ws, Safety, nil, "exclusive-poll", 8, -1},
		{model.OverflowDrop, ws, Safety, nil, "single-queue", 15, -1},
		{model.OverflowDrop, ws, Safety, []string{"conservation"}, "conservation", 15, -1},
		{model.NoAging, prio, Fairness, nil, string(Fairness), 7, 2},
	}
	for _, tc := range cases {
		c := tc.cfg
		c.Variant = tc.variant
		r, err := Explore(context.Background(), c, Options{Property: tc.prop, Invariants: tc.invariants})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != checker.Violated || r.Property != tc.want {
			t.Errorf("%s/%s: got %s %s (%s), want violated %s", tc.variant, tc.prop, r.Verdict, r.Property, r.Message, tc.want)
			continue
		}
		cx := r.Counterexample
		if tc.steps > 0 && len(cx.Steps) != tc.steps || cx.Loop != tc.loop {
			t.Errorf("%s/%s: counterexample of %d steps, loop at %d; want %d steps, loop at %d", tc.variant, tc.prop, len(cx.Steps), cx.Loop, tc.steps, tc.loop)
		}
		t.Logf("%s/%s: %s after %d steps: %s", tc.variant, tc.prop, r.Property, len(cx.Steps), r.Message)
	}
}

// The priority policy with aging is fair; without aging it is not (above).
func TestAgingIsFair(t *testing.T) {
	for _, c := range []model.Config{
		{Policy: model.Priority, Workers: 1, Tasks: 2, Endless: true},
		{Policy: model.Priority, Workers: 1, Tasks: 3, Endless: true},
		{Policy: model.Priority, Workers: 2, Tasks: 3, Endless: true},
	} {
		r, err := Explore(context.Background(), c, Options{Property: Fairness})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != checker.Holds {
			t.Errorf("%s: %s %s: %s", c, r.Verdict, r.Property, r.Message)
		}
	}
}

// Symmetry reduction keeps every verdict and the property that fails, and
// stores fewer states.
func TestSymmetryKeepsVerdicts(t *testing.T) {
	var cfgs []model.Config
	for _, v := range []model.Variant{model.Correct, model.LostWakeup, model.DuplicateEnqueue, model.EnqueueWhileRunning, model.OverflowDrop} {
		cfgs = append(cfgs,
			model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1, Variant: v},
			model.Config{Policy: model.WorkSteal, Workers: 3, Tasks: 3, Pendings: 2, StealHalf: true, Variant: v},
		)
	}
	cfgs = append(cfgs,
		model.Config{Policy: model.FIFO, Workers: 3, Tasks: 3, Pendings: 2},
		model.Config{Policy: model.Retry, Workers: 2, Tasks: 3, Pendings: 1},
		model.Config{Policy: model.TimeSlice, Workers: 2, Tasks: 3, Pendings: 2},
		model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1, GlobalInterval: 2, OwnerFIFO: true},
	)
	par := 0
	if raceOn {
		par = 1 // the parallel explorer's race tests are TestParallelEqualsSequential's
	}
	for _, c := range cfgs {
		full, err := Explore(context.Background(), c, Options{Parallel: par})
		if err != nil {
			t.Fatal(err)
		}
		red, err := Explore(context.Background(), c, Options{Symmetry: true, Parallel: par})
		if err != nil {
			t.Fatal(err)
		}
		if full.Verdict != red.Verdict || full.Property != red.Property {
			t.Errorf("%s: %s %s without symmetry, %s %s with", c, full.Verdict, full.Property, red.Verdict, red.Property)
		}
		if full.Verdict == checker.Holds && (red.States >= full.States || red.Depth != full.Depth) {
			t.Errorf("%s: %d states (depth %d) with symmetry, %d (depth %d) without", c, red.States, red.Depth, full.States, full.Depth)
		}
		if red.Verdict == checker.Violated && len(red.Counterexample.Steps) != len(full.Counterexample.Steps) {
			t.Errorf("%s: counterexample of %d steps with symmetry, %d without", c, len(red.Counterexample.Steps), len(full.Counterexample.Steps))
		}
	}
	if _, err := Explore(context.Background(), model.Config{}, Options{Symmetry: true, Property: Fairness}); err == nil {
		t.Error("symmetry with a liveness property must be refused")
	}
}

// A budget gives Unknown, never Holds.
func TestBudgetIsUnknown(t *testing.T) {
	c := model.Config{Policy: model.WorkSteal, Workers: 3, Tasks: 4, Pendings: 1}
	for _, o := range []Options{{MaxStates: 5000}, {MaxBytes: 1 << 10}, {Timeout: 1}, {MaxStates: 5000, Property: EventuallyDone}} {
		r, err := Explore(context.Background(), c, o)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != checker.Unknown || r.Message == "" {
			t.Errorf("%+v: %s (%s), want unknown with a reason", o, r.Verdict, r.Message)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, _ := Explore(ctx, c, Options{})
	if r.Verdict != checker.Unknown || r.Message != "interrupted" {
		t.Errorf("cancelled: %s %q", r.Verdict, r.Message)
	}
}

// The parallel explorer reports the same counterexample on every run: the
// state ids and the finding chosen do not depend on the timing.
func TestParallelDeterministic(t *testing.T) {
	c := model.Config{Policy: model.WorkSteal, Workers: 3, Tasks: 3, Pendings: 2, Variant: model.OverflowDrop}
	var first string
	runs := 4
	if raceOn {
		runs = 2
	}
	for run := 0; run < runs; run++ {
		r, err := Explore(context.Background(), c, Options{Parallel: 2})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, s := range r.Counterexample.Steps {
			got += s.Step.String() + "\n"
		}
		if run == 0 {
			first = got
		} else if got != first {
			t.Fatalf("run %d found another counterexample:\n%s\nthan run 0:\n%s", run, got, first)
		}
	}
}

// The parallel explorer numbers the states as the sequential one does, so
// with any number of goroutines it reports the same verdict, counts and
// counterexample, step for step, on the correct model and on every broken
// variant (with the invariants and without them). So does the compact
// store, which rebuilds the path without stored parents.
func TestParallelEqualsSequential(t *testing.T) {
	var cfgs []model.Config
	for _, v := range model.Variants {
		if v.Variant == model.NoAging {
			continue
		}
		cfgs = append(cfgs, model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1, Variant: v.Variant})
	}
	if !raceOn {
		cfgs = append(cfgs,
			model.Config{Policy: model.WorkSteal, Workers: 3, Tasks: 3, Pendings: 2, Variant: model.OverflowDrop},
			model.Config{Policy: model.WorkSteal, Workers: 3, Tasks: 3, Pendings: 1})
	}
	cfgs = append(cfgs,
		model.Config{Policy: model.TimeSlice, Workers: 2, Tasks: 3, Pendings: 2},
		model.Config{Policy: model.Retry, Workers: 2, Tasks: 3, Pendings: 1})
	for _, c := range cfgs {
		for _, o := range []Options{{}, {Invariants: []string{}}, {Symmetry: true}, {Compact: true, Invariants: []string{}}} {
			o.Parallel = 1
			plain := o
			plain.Compact = false
			seq, err := Explore(context.Background(), c, plain)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []int{1, 2, 3} {
				if p == 1 && !o.Compact || p == 3 && (o.Compact || raceOn) {
					continue
				}
				o.Parallel = p
				par, err := Explore(context.Background(), c, o)
				if err != nil {
					t.Fatal(err)
				}
				if par.Verdict != seq.Verdict || par.Property != seq.Property || par.Message != seq.Message {
					t.Errorf("%s %+v parallel=%d: %s %s %q; sequential %s %s %q", c, o.Invariants, p, par.Verdict, par.Property, par.Message, seq.Verdict, seq.Property, seq.Message)
					continue
				}
				if seq.Verdict == checker.Holds && (par.States != seq.States || par.Transitions != seq.Transitions || par.Depth != seq.Depth) {
					t.Errorf("%s parallel=%d: %d/%d/%d; sequential %d/%d/%d", c, p, par.States, par.Transitions, par.Depth, seq.States, seq.Transitions, seq.Depth)
				}
				if a, b := cexString(par.Counterexample), cexString(seq.Counterexample); a != b {
					t.Errorf("%s %+v parallel=%d: counterexample\n%s\nsequential\n%s", c, o.Invariants, p, a, b)
				}
			}
		}
	}
}

// The parallel explorer builds the same graph for a liveness property as
// the sequential one: the same edges, in the same order, with the same
// processes and enabled sets.
func TestParallelGraphEqualsSequential(t *testing.T) {
	cfgs := []model.Config{
		{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1},
		{Policy: model.WorkSteal, Workers: 2, Tasks: 2, Pendings: 1, Variant: model.LostWakeup},
		{Policy: model.Priority, Workers: 1, Tasks: 2, Endless: true, Variant: model.NoAging},
		{Policy: model.TimeSlice, Workers: 2, Tasks: 2, Pendings: 2},
	}
	if !raceOn {
		cfgs = append(cfgs, model.Config{Policy: model.WorkSteal, Workers: 3, Tasks: 3, Pendings: 1})
	}
	graph := func(c model.Config, par int) *explorer {
		m, err := model.New(c)
		if err != nil {
			t.Fatal(err)
		}
		e, err := newExplorer(context.Background(), m, Options{Property: EventuallyDone, Parallel: par, Invariants: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		e.res = &Result{}
		if par == 1 {
			e.sequential()
		} else {
			e.parallel()
		}
		return e
	}
	for _, c := range cfgs {
		seq := graph(c, 1)
		for _, par := range []int{2, 3} {
			p := graph(c, par)
			if p.res.Verdict != seq.res.Verdict || p.st.n != seq.st.n {
				t.Fatalf("%s parallel=%d: %s, %d states; sequential %s, %d", c, par, p.res.Verdict, p.st.n, seq.res.Verdict, seq.st.n)
			}
			if !slices.Equal(p.off, seq.off) || !slices.Equal(p.edges, seq.edges) || !slices.Equal(p.procs, seq.procs) || !slices.Equal(p.enabled, seq.enabled) {
				t.Errorf("%s parallel=%d: the graph differs from the sequential one (%d/%d offsets, %d/%d edges)", c, par, len(p.off), len(seq.off), len(p.edges), len(seq.edges))
			}
			if len(seq.edges) == 0 || len(seq.off) != int(seq.st.n)+1 {
				t.Fatalf("%s: no graph built (%d edges, %d offsets for %d states)", c, len(seq.edges), len(seq.off), seq.st.n)
			}
		}
	}
}
