package control

import (
	"errors"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
)

func binomial(n, k int) int {
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
	}
	return r
}

func TestExploreCounts(t *testing.T) {
	noLeak(t)
	for _, tc := range []struct{ g, k int }{{2, 0}, {2, 1}, {2, 2}, {2, 3}, {3, 1}, {3, 2}} {
		seen := map[string]bool{}
		res := Explore(ExploreConfig{}, func(c *Controller) error {
			order := []byte{}
			err := c.Run(func() {
				for i := range tc.g {
					c.Go(func() {
						for range tc.k {
							order = append(order, byte('a'+i))
							c.Yield(executor.PointNone)
						}
						order = append(order, byte('a'+i))
					})
				}
			})
			seen[string(order)] = true
			return err
		})
		// Multinomial: (g(k+1))! / ((k+1)!)^g.
		want, n := 1, 0
		for range tc.g {
			n += tc.k + 1
			want *= binomial(n, tc.k+1)
		}
		if res.Verdict != checker.Holds || res.Runs != want || len(seen) != want {
			t.Errorf("%d goroutines × %d yields: %v after %d runs, %d distinct interleavings; want %d", tc.g, tc.k, res.Verdict, res.Runs, len(seen), want)
		}
	}
}

func TestExplorePreemptionBound(t *testing.T) {
	noLeak(t)
	// Two goroutines with k yields: with no preemption, 2 schedules (which
	// one starts); with at most one, 2(k+1) (also where the first is
	// preempted: after any of its k yields).
	for _, k := range []int{1, 2, 4, 8} {
		for bound, want := range map[int]int{1: 2 * (k + 1)} {
			res := Explore(ExploreConfig{MaxPreemptions: bound}, func(c *Controller) error {
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
			if res.Verdict != checker.Holds || res.Runs != want {
				t.Errorf("k=%d bound %d: %v after %d runs, want %d", k, bound, res.Verdict, res.Runs, want)
			}
		}
	}
}

func TestExploreFindsLostUpdate(t *testing.T) {
	noLeak(t)
	var x int
	res := Explore(ExploreConfig{}, func(c *Controller) error {
		x = 0
		if err := c.Run(lostUpdate(c, &x, false)); err != nil {
			return err
		}
		if x != 2 {
			return errors.New("lost update")
		}
		return nil
	})
	if res.Verdict != checker.Violated || res.Err.Error() != "lost update" {
		t.Fatalf("%v: %v", res.Verdict, res.Err)
	}
	t.Logf("found after %d runs, %d preemptions", res.Runs, res.Schedule.Preemptions())
	// The failing schedule replays to the same failure.
	c := New(Random(0))
	x = 0
	if err := c.Replay(lostUpdate(c, &x, false), res.Schedule); err != nil || x != 1 {
		t.Fatalf("replay: %v, x = %d", err, x)
	}
}

func TestExploreFindsCheckThenAct(t *testing.T) {
	noLeak(t)
	res := Explore(ExploreConfig{}, func(c *Controller) error {
		sets := 0
		if err := c.Run(checkThenAct(c, &sets)); err != nil {
			return err
		}
		if sets != 1 {
			return errors.New("initialised twice")
		}
		return nil
	})
	if res.Verdict != checker.Violated {
		t.Fatalf("%v after %d runs: %v", res.Verdict, res.Runs, res.Err)
	}
}

func TestExploreLockedHolds(t *testing.T) {
	noLeak(t)
	res := Explore(ExploreConfig{}, func(c *Controller) error {
		x := 0
		if err := c.Run(lostUpdate(c, &x, true)); err != nil {
			return err
		}
		if x != 2 {
			return errors.New("lost update")
		}
		return nil
	})
	if res.Verdict != checker.Holds || res.Runs < 2 {
		t.Fatalf("%v after %d runs: %v", res.Verdict, res.Runs, res.Err)
	}
	t.Logf("%d schedules", res.Runs)
}

// The mini pool with a condition variable that loses a broadcast between
// the check and the wait: some schedule deadlocks, and the exploration
// finds it; the correct condition variable holds on every schedule.
func TestExploreLostWakeup(t *testing.T) {
	noLeak(t)
	for _, lossy := range []bool{false, true} {
		res := Explore(ExploreConfig{MaxRuns: 200_000}, func(c *Controller) error {
			prog, ran := poolProgram(c, 1, 2, lossy)
			if err := c.Run(prog); err != nil {
				return err
			}
			if *ran != 2 {
				return errors.New("tasks lost")
			}
			return nil
		})
		var d *DeadlockError
		switch {
		case !lossy && res.Verdict != checker.Holds:
			t.Errorf("correct pool: %v after %d runs: %v", res.Verdict, res.Runs, res.Err)
		case lossy && (res.Verdict != checker.Violated || !errors.As(res.Err, &d)):
			t.Errorf("lossy pool: %v after %d runs: %v", res.Verdict, res.Runs, res.Err)
		default:
			t.Logf("lossy=%v: %v after %d runs: %v", lossy, res.Verdict, res.Runs, res.Err)
		}
	}
}

func TestExploreRunBound(t *testing.T) {
	noLeak(t)
	res := Explore(ExploreConfig{MaxRuns: 5}, func(c *Controller) error {
		return c.Run(yieldersN(c, 3, 3))
	})
	if res.Verdict != checker.Unknown || res.Runs != 5 {
		t.Fatalf("%v after %d runs", res.Verdict, res.Runs)
	}
}

func TestExploreNondeterminism(t *testing.T) {
	noLeak(t)
	n := 0
	res := Explore(ExploreConfig{}, func(c *Controller) error {
		n++
		return c.Run(yieldersN(c, 2+n%2, 2)) // a different program each run
	})
	if res.Verdict != checker.Unknown || !errors.Is(res.Err, ErrDiverged) {
		t.Fatalf("%v: %v", res.Verdict, res.Err)
	}
}

func TestExploreMustRun(t *testing.T) {
	res := Explore(ExploreConfig{}, func(c *Controller) error { return nil })
	if res.Verdict != checker.Unknown || res.Err == nil {
		t.Fatalf("%v: %v", res.Verdict, res.Err)
	}
}

func yieldersN(c *Controller, g, k int) func() {
	return func() {
		for range g {
			c.Go(func() {
				for range k {
					c.Yield(executor.PointNone)
				}
			})
		}
	}
}
