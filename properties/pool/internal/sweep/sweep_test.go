package sweep

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// SortEdges orders edges as comparing instant, id and kind does, packed
// or not (a small atBits makes it fall back to comparing).
func TestSortEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		edges := make([]Edge, r.IntN(300))
		for i := range edges {
			edges[i] = Edge{r.Int64N(1 << 12), r.IntN(64), uint8(r.IntN(4))}
		}
		want := slices.Clone(edges)
		slices.SortFunc(want, func(a, b Edge) int {
			return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Kind, b.Kind))
		})
		for _, bits := range []uint{44, 10} { // 10: some instants do not fit
			got := slices.Clone(edges)
			SortEdges(got, nil, bits)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, %d bits: sorted %v, want %v", round, bits, got, want)
			}
		}
	}
}
