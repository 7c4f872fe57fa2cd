package rt_test

import (
	"testing"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control"
)

// TestReadySets: the candidates of every choice, from the sets of
// runnable and ready goroutines (ready.go), are those that asking every
// goroutine alive gives. The package's tests check that at every choice
// (export_test.go); this test gives the check the choices of a pool's
// runs: workers idle on a channel, housekeepers on a ticker and a done
// channel, submitters, a spin lock and WaitGroups, under random and PCT
// schedules, with and without early timers, in one bubble as the pool
// suite makes them.
func TestReadySets(t *testing.T) {
	bub, err := rt.NewBubble(t)
	if err != nil {
		t.Fatal(err)
	}
	defer bub.Close()
	steps := 0
	for seed := range uint64(150) {
		for _, early := range []bool{false, true} {
			for _, s := range []control.Strategy{control.Random(seed), control.NewPCT(3, 400, seed)} {
				sc, err := bub.Run(rt.Config{Strategy: s, EarlyTimers: early}, func(*testing.T) { poolish() })
				if err != nil {
					t.Fatalf("seed %d, early %v, %T: %v", seed, early, s, err)
				}
				steps += sc.Steps
			}
		}
	}
	t.Logf("%d steps checked", steps)
}
