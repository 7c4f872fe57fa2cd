package pool

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortEdges orders edges as comparing instant, id and kind does, packed
// or not (a small atBits makes it fall back to comparing).
func TestSortEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		edges := make([]edge, r.IntN(300))
		for i := range edges {
			edges[i] = edge{r.Int64N(1 << 12), r.IntN(64), uint8(r.IntN(4))}
		}
		want := slices.Clone(edges)
		slices.SortFunc(want, func(a, b edge) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.id, b.id), cmp.Compare(a.kind, b.kind))
		})
		for _, bits := range []uint{44, 10} { // 10: some instants do not fit
			got := slices.Clone(edges)
			sortEdges(got, nil, bits)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, %d bits: sorted %v, want %v", round, bits, got, want)
			}
		}
	}
}
