package control

import (
	"slices"
	"testing"

	"github.com/execspec/execspec/executor"
)

// depth2 is a bug of depth 2: goroutine A sets a to 1 at its 41st step and
// back to 0 ten steps later; goroutine B fails if it reads 1. B's read must
// come after A's 41st step and before its 51st: two ordering constraints.
// Random choices almost never let A run 40 steps before B's second step;
// PCT finds it when A has the higher priority and a change point falls in
// the window.
func depth2(c *Controller, bug *bool) func() {
	a := 0
	return func() {
		c.Go(func() { // A
			for i := range 60 {
				switch i {
				case 40:
					a = 1
				case 50:
					a = 0
				}
				c.Yield(executor.PointPush)
			}
		})
		c.Go(func() { // B
			c.Yield(executor.PointPop)
			if a == 1 {
				*bug = true
			}
			for range 4 {
				c.Yield(executor.PointPop)
			}
		})
	}
}

// runsToFind runs depth2 under s until the bug shows, up to limit runs.
func runsToFind(t *testing.T, s Strategy, limit int) int {
	t.Helper()
	c := New(s)
	for i := 1; i <= limit; i++ {
		bug := false
		mustRun(t, c, depth2(c, &bug))
		if bug {
			return i
		}
	}
	return -1
}

func TestPCTFindsDepth2(t *testing.T) {
	noLeak(t)
	const k = 65 // steps of depth2: 60 of A, 5 of B
	bound := NewPCT(2, k, 0).Bound(2)
	if bound != 2*k {
		t.Fatalf("bound %d", bound)
	}
	var found []int
	for seed := range uint64(15) {
		n := runsToFind(t, NewPCT(2, 0, seed), 3*bound) // k learned
		if n < 0 {
			t.Fatalf("seed %d: PCT(2) did not find the depth-2 bug in %d runs (3× its bound)", seed, 3*bound)
		}
		found = append(found, n)
	}
	slices.Sort(found)
	median := found[len(found)/2]
	t.Logf("PCT(2) runs to find, 15 seeds: %v (median %d; bound n·k = %d)", found, median, bound)
	if median > bound/4 {
		t.Errorf("median %d runs, not well under the bound %d", median, bound)
	}

	// Depth 1 (no change point) can never find it: the goroutine of
	// highest priority runs to its end.
	if n := runsToFind(t, NewPCT(1, 0, 1), bound); n >= 0 {
		t.Errorf("PCT(1) found a depth-2 bug in run %d", n)
	}
	// Uniform random choices practically never let A run 40 steps first.
	if n := runsToFind(t, Random(1), 2*bound); n >= 0 {
		t.Errorf("random choice found it in run %d", n)
	}
}

func TestPCTDeterministic(t *testing.T) {
	noLeak(t)
	sums := func() []uint64 {
		c := New(NewPCT(3, 0, 77))
		var out []uint64
		for range 30 {
			prog, _ := poolProgram(c, 3, 4, false)
			mustRun(t, c, prog)
			out = append(out, c.Schedule().Checksum)
		}
		return out
	}
	a, b := sums(), sums()
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different PCT runs")
	}
	if len(slices.Compact(slices.Sorted(slices.Values(a)))) < 5 {
		t.Fatal("PCT runs barely differ")
	}
}

func TestPCTFindsLostUpdate(t *testing.T) {
	noLeak(t)
	c := New(NewPCT(2, 0, 3))
	for range 200 {
		x := 0
		mustRun(t, c, lostUpdate(c, &x, false))
		if x != 2 {
			return
		}
	}
	t.Fatal("PCT(2) did not find the lost update in 200 runs")
}
