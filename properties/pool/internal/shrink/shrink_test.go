package shrink

import (
	"slices"
	"testing"
	"time"

	"github.com/execspec/execspec/properties/control"
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

// Guided replays its list, each choice modulo the goroutines that can
// run, then runs the current goroutine on; Begin starts it over.
func TestGuided(t *testing.T) {
	g := Guided([]control.Choice{{Index: 1}, {Index: 5}})
	d := control.Decision{Runnable: []int{0, 1, 2}}
	if a, b, c := g.Choose(d), g.Choose(d), g.Choose(d); a != 1 || b != 2 || c != 0 {
		t.Errorf("choices %d %d %d, want 1 2 0", a, b, c)
	}
	g.(interface{ Begin() }).Begin()
	if a := g.Choose(d); a != 1 {
		t.Errorf("after Begin: %d, want 1", a)
	}
}

// Preemptions sets choices to 0 from the end while the defect shows, and
// goes on from the schedule each successful try made.
func TestPreemptions(t *testing.T) {
	choices := []control.Choice{{Index: 2}, {Index: 0}, {Index: 1}, {Index: 3}}
	var tries [][]control.Choice
	shows := func(try []control.Choice) ([]control.Choice, bool) {
		tries = append(tries, try)
		if try[0].Index == 0 {
			return nil, false // the defect needs the first preemption
		}
		return try, true
	}
	Preemptions(choices, shows, time.Now().Add(time.Minute))
	if len(tries) != 3 || len(tries[0]) != 4 || len(tries[1]) != 3 || len(tries[2]) != 1 {
		t.Fatalf("tries %v", tries)
	}
}
