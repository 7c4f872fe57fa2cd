package explore

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
)

// A bitstate search never says Holds; on a state space that fits its
// filter it meets every state (the exact count) with a coverage estimate
// near 100 %, whatever its seed and successor order.
func TestBitstateNeverHolds(t *testing.T) {
	c := model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1}
	for _, b := range []BitstateOptions{{Bytes: 1 << 20}, {Bytes: 1 << 20, Seed: 7, Shuffle: true}} {
		r, st, err := Bitstate(context.Background(), c, Options{}, b)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != checker.Unknown || r.States != 4692 || st.Coverage < 0.99 {
			t.Errorf("%+v: %s %q, %d states (want 4692), coverage %.4f", b, r.Verdict, r.Message, r.States, st.Coverage)
		}
		if e := st.Sketch.Estimate(); math.Abs(e-4692)/4692 > 0.05 {
			t.Errorf("sketch estimates %.0f states, want about 4692", e)
		}
	}
	// A tiny filter loses states, and says so.
	r, st, err := Bitstate(context.Background(), c, Options{}, BitstateOptions{Bytes: 1 << 8})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != checker.Unknown || r.States >= 4692 || st.Coverage > 0.9 {
		t.Errorf("1 KiB filter: %s, %d states, coverage %.3f: want fewer states and a low estimate", r.Verdict, r.States, st.Coverage)
	}
	if _, _, err := Bitstate(context.Background(), c, Options{Property: EventuallyDone}, BitstateOptions{}); err == nil {
		t.Error("a liveness property must be refused")
	}
	// A filter too large to allocate is an error, not a crash of the
	// process (the allocation is all at once).
	for _, n := range []int64{1 << 62, maxFilterBytes + 1} {
		if _, _, err := Bitstate(context.Background(), c, Options{}, BitstateOptions{Bytes: n}); err == nil {
			t.Errorf("a filter of %d bytes was accepted", n)
		}
	}
	if ram := physicalMemory(); ram > 0 && ram < maxFilterBytes/2 {
		if _, _, err := Bitstate(context.Background(), c, Options{}, BitstateOptions{Bytes: 2 * ram}); err == nil {
			t.Errorf("a filter of twice the machine's memory (%d MiB) was accepted", ram>>19)
		}
	}
}

// A bitstate search finds every broken variant's violation (the same
// property as the exhaustive search), and its counterexample is a real
// run: replaying its steps by the rules from the initial state reaches a
// state that breaks the property.
func TestBitstateFindsVariants(t *testing.T) {
	for _, v := range model.Variants {
		if v.Variant == model.NoAging {
			continue // a fairness bug: liveness only
		}
		c := model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1, Variant: v.Variant}
		full, err := Explore(context.Background(), c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= 3; seed++ {
			r, _, err := Bitstate(context.Background(), c, Options{}, BitstateOptions{Bytes: 1 << 20, Seed: seed, Shuffle: seed > 1})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != checker.Violated || r.Property != full.Property {
				t.Errorf("%s seed %d: %s %s, want violated %s", v.Variant, seed, r.Verdict, r.Property, full.Property)
				continue
			}
			checkReplay(t, c, r)
		}
	}
}

// checkReplay applies the counterexample's steps from the initial state and
// checks that the state reached breaks r.Property.
func checkReplay(t *testing.T, c model.Config, r *Result) {
	t.Helper()
	m, _ := model.New(c)
	s := m.Init()
	cx := r.Counterexample
	if cx.Incomplete != "" {
		t.Fatalf("%s: incomplete counterexample: %s", c.Variant, cx.Incomplete)
	}
	for k, st := range cx.Steps {
		if err := m.Apply(s, st.Step); err != nil {
			if k == len(cx.Steps)-1 && st.State == nil && r.Property == TakeQueuedOnly {
				return // the refused take is the violation
			}
			t.Fatalf("%s: step %d (%s) does not apply: %v", c.Variant, k+1, st.Step, err)
		}
	}
	if inv, ok := model.InvariantByName(r.Property); ok {
		if inv.Check(m, s) == nil {
			l, _ := m.Layout()
			if l.Pack(s, make([]uint64, l.Words())) {
				t.Errorf("%s: the state reached does not break %s:\n%s", c.Variant, r.Property, s)
			}
		}
		return
	}
	if r.Property == model.NoStuckState {
		n := 0
		m.Next(s, m.Init(), func(model.Step, *model.State, error) bool { n++; return true })
		if n != 0 || s.AllDone() {
			t.Errorf("%s: the state reached is not stuck:\n%s", c.Variant, s)
		}
	}
}

// The members of a swarm differ (seeds, orders, bounds); merged, they give
// one verdict: violated if any member found a violation, otherwise unknown
// with the union of the states they visited.
func TestSwarmMerge(t *testing.T) {
	c := model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1}
	var rs []*SwarmResult
	const n = 4
	for i := 1; i <= n; i++ {
		b, err := SwarmMember(i, n, BitstateOptions{Bytes: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		r, st, err := Bitstate(context.Background(), c, Options{}, b)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, NewSwarmResult(i, n, b, r, st))
	}
	v, err := MergeSwarm(rs)
	if err != nil {
		t.Fatal(err)
	}
	most := int64(0)
	for _, r := range rs {
		most = max(most, r.States)
	}
	if v.Verdict != checker.Unknown || v.Members != n || v.Union < float64(most) || v.Union > 4692*1.05 || v.Coverage <= 0 || v.Coverage > 1 {
		t.Errorf("merged: %s, %d members, union %.0f (largest member %d, reachable 4692), coverage %.3f", v.Verdict, v.Members, v.Union, most, v.Coverage)
	}
	// A member stopped by a budget does not estimate the reachable states.
	b0, _ := SwarmMember(1, n, BitstateOptions{Bytes: 1 << 10})
	r0, st0, _ := Bitstate(context.Background(), c, Options{MaxStates: 2000}, b0)
	if cut, err := MergeSwarm([]*SwarmResult{NewSwarmResult(1, n, b0, r0, st0)}); err != nil || st0.Complete || cut.Coverage != -1 {
		t.Errorf("a member stopped by its budget: complete %v, merged coverage %.3f (want unknown)", st0.Complete, cut.Coverage)
	}
	if rs[0].Seed == rs[1].Seed || rs[2].DepthBound == 0 {
		t.Errorf("members not diversified: %+v", rs[:3])
	}
	// One violation makes the swarm's verdict.
	bad := c
	bad.Variant = model.LostWakeup
	b, _ := SwarmMember(2, n, BitstateOptions{Bytes: 1 << 16})
	r, st, err := Bitstate(context.Background(), bad, Options{}, b)
	if err != nil {
		t.Fatal(err)
	}
	v, err = MergeSwarm([]*SwarmResult{NewSwarmResult(2, n, b, r, st)})
	if err != nil || v.Verdict != checker.Violated || len(v.Missing) != n-1 {
		t.Errorf("a violation: %v %+v", err, v)
	}
	// Results of another model, or a member twice, are refused.
	if _, err := MergeSwarm(append(rs, NewSwarmResult(2, n, b, r, st))); err == nil {
		t.Error("merged results of two models")
	}
	if _, err := MergeSwarm(append(rs, rs[0])); err == nil {
		t.Error("merged a member twice")
	}
}

// endless is a reader of one JSON string that never ends.
type endless struct{ began bool }

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	if !e.began {
		n = copy(p, `{"steps":["`)
		e.began = true
	}
	for ; n < len(p); n++ {
		p[n] = 'a'
	}
	return n, nil
}

// A result file larger than any swarm result is refused after reading at
// most MaxSwarmResult bytes, not read into memory to its end.
func TestReadSwarmResultTooLarge(t *testing.T) {
	_, err := ReadSwarmResult("huge.json", &endless{})
	if err == nil || !strings.Contains(err.Error(), "huge.json: larger than any swarm result") {
		t.Fatalf("got %v", err)
	}
}
