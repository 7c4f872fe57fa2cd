package shrink

import (
	"slices"
	"testing"
	"time"
)

func TestCuts(t *testing.T) {
	if got, want := Cuts(4), [][2]int{{0, 2}, {2, 4}, {0, 1}, {1, 2}, {2, 3}, {3, 4}}; !slices.Equal(got, want) {
		t.Errorf("Cuts(4) = %v, want %v", got, want)
	}
	got := Cuts(40) // 20s, 10s, 5s, 2s, 1s
	if len(got) != 2+4+8+20+40 || got[0] != [2]int{0, 20} || got[len(got)-1] != [2]int{39, 40} {
		t.Errorf("Cuts(40): %d spans, %v ... %v", len(got), got[0], got[len(got)-1])
	}
	if got := Cuts(0); len(got) != 0 {
		t.Errorf("Cuts(0) = %v", got)
	}
}

// Greedy keeps the elements the defect needs (here 3 and 7) and drops
// the rest; a candidate that loses one of them does not show it.
func TestGreedy(t *testing.T) {
	w := []int{1, 2, 3, 4, 5, 6, 7, 8, 9}
	candidates := func(w []int) [][]int {
		var out [][]int
		for _, c := range Cuts(len(w)) {
			out = append(out, slices.Delete(slices.Clone(w), c[0], c[1]))
		}
		return out
	}
	shows := func(w []int) bool { return slices.Contains(w, 3) && slices.Contains(w, 7) }
	if got := Greedy(w, candidates, shows, time.Now().Add(time.Minute)); !slices.Equal(got, []int{3, 7}) {
		t.Errorf("Greedy = %v, want [3 7]", got)
	}
	if got := Greedy(w, candidates, shows, time.Now()); !slices.Equal(got, w) {
		t.Errorf("Greedy past its deadline = %v, want w unchanged", got)
	}
}
