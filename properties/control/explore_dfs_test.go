package control

import (
	"fmt"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
)

// Two goroutines, each counting to k with a yield after each step: the
// program's whole state is the pair of counters (each goroutine's position
// is its counter), so keying by it is sound, and state caching must reach
// all (k+1)² pairs in far fewer runs than the stateless search's
// interleavings.
func TestExploreStateKeyCuts(t *testing.T) {
	noLeak(t)
	const k = 4
	for _, cached := range []bool{false, true} {
		var a, b int
		seen := map[[2]int]bool{}
		cfg := ExploreConfig{}
		if cached {
			cfg.StateKey = func() (string, bool) { return fmt.Sprint(a, b), true }
		}
		res := Explore(cfg, func(c *Controller) error {
			a, b = 0, 0
			seen[[2]int{0, 0}] = true
			return c.Run(func() {
				for _, x := range []*int{&a, &b} {
					c.Go(func() {
						for range k {
							*x++
							seen[[2]int{a, b}] = true
							c.Yield(executor.PointNone)
						}
					})
				}
			})
		})
		all := binomial(2*k+2, k+1) // k yields: k+1 segments each
		t.Logf("cached %v: %d runs, %d states", cached, res.Runs, len(seen))
		if res.Verdict != checker.Holds || len(seen) != (k+1)*(k+1) {
			t.Fatalf("cached %v: %v after %d runs, %d states; want holds and %d states", cached, res.Verdict, res.Runs, len(seen), (k+1)*(k+1))
		}
		if !cached && res.Runs != all {
			t.Errorf("stateless: %d runs, want every interleaving, %d", res.Runs, all)
		}
		if cached && res.Runs*2 > all {
			t.Errorf("cached: %d runs, want at most half of the %d interleavings", res.Runs, all)
		}
	}
}

// A key that cannot be read (ok false) never cuts: the search is the
// stateless one.
func TestExploreStateKeyUnknown(t *testing.T) {
	noLeak(t)
	res := Explore(ExploreConfig{StateKey: func() (string, bool) { return "", false }}, func(c *Controller) error {
		return c.Run(func() {
			for range 2 {
				c.Go(func() {
					for range 3 {
						c.Yield(executor.PointNone)
					}
				})
			}
		})
	})
	if want := binomial(8, 4); res.Verdict != checker.Holds || res.Runs != want {
		t.Errorf("%v after %d runs, want holds after %d", res.Verdict, res.Runs, want)
	}
}

// Decisions that leave the key as it is get alternatives only at the first
// BlockDepth of them: two goroutines yielding k times each without
// changing the state are one block.
func TestExploreBlockDepth(t *testing.T) {
	noLeak(t)
	const k = 4
	runs := map[int]int{}
	for _, depth := range []int{0, 1, 2, 3} {
		res := Explore(ExploreConfig{StateKey: func() (string, bool) { return "same", true }, BlockDepth: depth}, func(c *Controller) error {
			return c.Run(func() {
				for range 2 {
					c.Go(func() {
						for range k {
							c.Yield(executor.PointNone)
						}
					})
				}
			})
		})
		if res.Verdict != checker.Holds {
			t.Fatalf("depth %d: %v: %v", depth, res.Verdict, res.Err)
		}
		runs[depth] = res.Runs
	}
	t.Logf("runs by depth: %v (stateless: %d)", runs, binomial(2*k+2, k+1))
	if runs[0] != runs[1] || runs[1] > 3 || runs[2] <= runs[1] || runs[3] <= runs[2] || runs[3] >= binomial(2*k+2, k+1) {
		t.Errorf("runs by depth %v: want depth 0 as 1, at most 3 runs at depth 1, more at each greater depth, fewer than the stateless %d", runs, binomial(2*k+2, k+1))
	}
}
