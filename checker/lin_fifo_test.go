package checker

import (
	"math/rand/v2"
	"testing"

	"github.com/anishathalye/porcupine"
)

// The polynomial FIFO decision agrees with porcupine's search on small
// histories, legal ones and ones with a bug injected, whenever it decides
// (a value taken twice leaves it undecided: porcupine then searches).
func TestLinFIFODecideAgreesWithSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	counts := map[Verdict]int{}
	for i := range 400 {
		ops := linFIFOHistory(8+r.IntN(16), 1+r.IntN(2), false, uint64(i))
		var takes []int
		for k, op := range ops {
			if op.Kind == LinTakeHead {
				takes = append(takes, k)
			}
		}
		switch m := r.IntN(5); {
		case m == 1 && len(takes) >= 2: // two takes swap their values
			a, b := takes[r.IntN(len(takes))], takes[r.IntN(len(takes))]
			ops[a].Value, ops[b].Value = ops[b].Value, ops[a].Value
		case m == 2 && len(takes) >= 1: // a value taken twice
			a := takes[r.IntN(len(takes))]
			dup := ops[a]
			dup.Call, dup.Return = ops[len(ops)-1].Return+1, ops[len(ops)-1].Return+2
			ops = append(ops, dup)
		case m == 3 && len(takes) >= 1: // a take moved before its push
			a := takes[r.IntN(len(takes))]
			ops[a].Call, ops[a].Return = 1, 2
		}
		complete := r.IntN(2) == 0
		ws, err := linQueueWindows(ops, complete)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			got, why := linFIFODecide(w.ops)
			ok := porcupine.CheckOperations(linQueueModel("q"), w.ops)
			want := Violated
			if ok {
				want = Holds
			}
			if got != Unknown && got != want {
				t.Fatalf("history %d: decision %s (%s), search %s\n%v", i, got, why, want, w.ops)
			}
			counts[got]++
		}
	}
	if counts[Holds] == 0 || counts[Violated] < 50 || counts[Unknown] == 0 {
		t.Fatalf("too few of each: %v", counts)
	}
	t.Logf("windows: %v", counts)
}
