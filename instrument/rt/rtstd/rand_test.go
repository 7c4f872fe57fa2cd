package rtstd

import (
	"slices"
	"testing"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control"
)

// Each run draws from a source of its own, seeded alike, whichever
// goroutine draws: two runs draw the same numbers, and a run's draws do
// not continue the previous run's.
func TestRandPerRun(t *testing.T) {
	draws := func(seed uint64) []int {
		var got []int
		_, err := rt.Run(t, rt.Config{Strategy: control.Random(seed)}, func(*testing.T) {
			got = append(got, Rand().Intn(1000))
			done := make(chan bool)
			rt.Go(func() { got = append(got, Rand().Intn(1000)); rt.Close(done) })
			rt.Recv(done)
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	a, b := draws(1), draws(2)
	if !slices.Equal(a, b) || len(a) != 2 {
		t.Fatalf("two runs drew %v and %v", a, b)
	}
	if Rand() != freeRand {
		t.Fatal("outside a run Rand is not the shared source")
	}
}
