package explore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
)

// cexString renders a counterexample's steps and loop for comparison.
func cexString(cx *Counterexample) string {
	if cx == nil {
		return "<none>"
	}
	var b strings.Builder
	for _, s := range cx.Steps {
		fmt.Fprintf(&b, "%s | %v\n", s.Step, s.State)
	}
	fmt.Fprintf(&b, "loop %d %s", cx.Loop, cx.Incomplete)
	return b.String()
}

// ExploreAll reports, on one exploration, what one Explore per property
// reports: the same verdicts, failing properties, messages, counts and
// counterexamples, on the correct model and on every broken variant.
func TestExploreAllMatchesSingle(t *testing.T) {
	ws := model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1}
	fin := []Property{Safety, EventuallyDone, WokenPolled}
	cases := []struct {
		cfg   model.Config
		props []Property
		invs  []string
	}{
		{ws, fin, nil},
		{model.Config{Policy: model.WorkSteal, Workers: 3, Tasks: 3, Pendings: 1, StealHalf: true}, fin, nil},
		{model.Config{Policy: model.Priority, Workers: 2, Tasks: 3, Endless: true}, AllProperties, nil},
		{model.Config{Policy: model.Priority, Workers: 1, Tasks: 2, Endless: true, Variant: model.NoAging}, AllProperties, nil},
		// Without safety first, a liveness property reports the bug.
		{model.Config{Policy: model.Priority, Workers: 1, Tasks: 2, Endless: true, Variant: model.NoAging}, []Property{WokenPolled, Fairness}, nil},
		{func() model.Config { c := ws; c.Variant = model.LostWakeup; return c }(), []Property{EventuallyDone, WokenPolled}, []string{}},
	}
	for _, v := range model.Variants {
		if v.Variant == model.NoAging {
			continue
		}
		c := ws
		c.Variant = v.Variant
		cases = append(cases, struct {
			cfg   model.Config
			props []Property
			invs  []string
		}{c, fin, nil}, struct {
			cfg   model.Config
			props []Property
			invs  []string
		}{c, fin, []string{}})
	}
	violations := 0
	for _, tc := range cases {
		name := fmt.Sprintf("%s invariants=%v props=%v", tc.cfg, tc.invs, tc.props)
		var want []*Result
		for _, p := range tc.props {
			r, err := Explore(context.Background(), tc.cfg, Options{Property: p, Invariants: tc.invs, Parallel: 1})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want = append(want, r)
			if r.Verdict == checker.Violated {
				violations++
				break
			}
		}
		// One goroutine stops where the separate runs stop; two stop at
		// the end of a batch, so their counts are compared only where the
		// property holds.
		for _, par := range []int{1, 2} {
			name := fmt.Sprintf("%s parallel=%d", name, par)
			all, err := ExploreAll(context.Background(), tc.cfg, tc.props, Options{Invariants: tc.invs, Parallel: par})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			compact, err := ExploreAll(context.Background(), tc.cfg, tc.props, Options{Invariants: tc.invs, Compact: true, Parallel: par})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(compact) != len(all) {
				t.Errorf("%s: %d results with the compact store, %d without", name, len(compact), len(all))
			}
			for k := range min(len(compact), len(all)) {
				if a, b := cexString(compact[k].Counterexample), cexString(all[k].Counterexample); a != b || compact[k].Verdict != all[k].Verdict {
					t.Errorf("%s: result %d with the compact store: %s\n%s\nwithout: %s\n%s", name, k, compact[k].Verdict, a, all[k].Verdict, b)
				}
			}
			if len(all) != len(want) {
				t.Errorf("%s: %d results from one exploration, %d from separate runs", name, len(all), len(want))
				continue
			}
			for k, w := range want {
				g := all[k]
				counts := par == 1 || w.Verdict == checker.Holds
				if g.Verdict != w.Verdict || g.Property != w.Property || g.Message != w.Message ||
					counts && (g.States != w.States || g.Transitions != w.Transitions || g.Depth != w.Depth) {
					t.Errorf("%s: result %d: %s %s %q %d/%d/%d; separately %s %s %q %d/%d/%d", name, k,
						g.Verdict, g.Property, g.Message, g.States, g.Transitions, g.Depth,
						w.Verdict, w.Property, w.Message, w.States, w.Transitions, w.Depth)
				}
				if gs, ws := cexString(g.Counterexample), cexString(w.Counterexample); gs != ws {
					t.Errorf("%s: result %d: counterexample\n%s\nseparately\n%s", name, k, gs, ws)
				}
			}
		}
	}
	if violations < len(model.Variants) {
		t.Errorf("only %d violations among the cases; every broken variant must be among them", violations)
	}
}

// An interrupt during the liveness analysis ends it with Unknown, not with
// a verdict on properties that were not decided.
func TestLivenessInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1}
	opts := Options{Property: WokenPolled, Progress: func(p Progress) {
		if strings.HasPrefix(p.Phase, "liveness") {
			cancel()
		}
	}}
	for _, par := range []int{1, 2} {
		opts.Parallel = par
		r, err := Explore(ctx, c, opts)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != checker.Unknown || r.Message != "interrupted" {
			t.Errorf("parallel=%d: %s %q, want unknown, interrupted", par, r.Verdict, r.Message)
		}
	}
}
