package lin

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/execspec/execspec/checker"
)

// The polynomial FIFO decision agrees with porcupine's search on small
// histories, legal ones and ones with a bug injected, whenever it decides
// (a value taken twice leaves it undecided: porcupine then searches).
func TestLinFIFODecideAgreesWithSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	counts := map[checker.Verdict]int{}
	for i := range 400 {
		ops := linFIFOHistory(8+r.IntN(16), 1+r.IntN(2), false, uint64(i))
		var takes []int
		for k, op := range ops {
			if op.Kind == TakeHead {
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
			want := checker.Violated
			if ok {
				want = checker.Holds
			}
			if got != checker.Unknown && got != want {
				t.Fatalf("history %d: decision %s (%s), search %s\n%v", i, got, why, want, w.ops)
			}
			counts[got]++
		}
	}
	if counts[checker.Holds] == 0 || counts[checker.Violated] < 50 || counts[checker.Unknown] == 0 {
		t.Fatalf("too few of each: %v", counts)
	}
	t.Logf("windows: %v", counts)
}

// The witness replay: a legal run in Seq order holds at once; a Seq outside
// its interval, or a Seq order that is not a legal run, is no witness (and
// the search decides).
func TestLinWitness(t *testing.T) {
	m := linQueueModel("q")
	op := func(kind QueueOpKind, v int64, seq uint64, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: linQueueIn{kind: kind, value: v, seq: seq}, Call: call, Return: ret}
	}
	legal := []porcupine.Operation{
		op(Push, 1, 2, 2, 6), op(Push, 2, 3, 4, 8), op(TakeHead, 1, 5, 5, 12), op(TakeHead, 2, 6, 9, 14),
	}
	if !linWitness(m, legal) {
		t.Error("a legal run in Seq order is no witness")
	}
	outside := slices.Clone(legal)
	outside[2].Call = 11 // its Seq (tick 10) before its call
	if linWitness(m, outside) {
		t.Error("a Seq outside its interval was taken as a witness")
	}
	swapped := slices.Clone(legal)
	swapped[2].Input, swapped[3].Input = linQueueIn{kind: TakeHead, value: 2, seq: 5}, linQueueIn{kind: TakeHead, value: 1, seq: 6}
	if linWitness(m, swapped) {
		t.Error("an illegal order was taken as a witness")
	}
}
