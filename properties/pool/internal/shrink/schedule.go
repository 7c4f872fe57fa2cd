package shrink

import (
	"slices"
	"time"

	"github.com/execspec/execspec/properties/control"
)

// Guided is the strategy that makes the choices of a list (each taken
// modulo the number of goroutines that can run, for a workload that
// changed) and then lets the current goroutine go on (choice 0): a
// failing schedule replayed, as far as it applies, on a smaller case.
func Guided(list []control.Choice) control.Strategy { return &guided{list: list} }

type guided struct {
	list []control.Choice
	next int
}

// Begin starts the list over, at the start of each run.
func (g *guided) Begin() { g.next = 0 }

func (g *guided) Choose(d control.Decision) int {
	if g.next >= len(g.list) {
		return 0
	}
	c := g.list[g.next]
	g.next++
	return c.Index % len(d.Runnable)
}

// Preemptions brings a failing schedule's choices towards no
// preemptions, the way rapid shrinks a drawn schedule, until the
// deadline: from the end (later choices matter least to the prefix that
// leads to the defect), each choice that is not 0 is tried as 0 with the
// choices after it dropped. shows runs a try (under Guided) and says
// whether it still showed the defect, and the choices the run made, from
// which the search goes on.
func Preemptions(choices []control.Choice, shows func(try []control.Choice) ([]control.Choice, bool), deadline time.Time) {
	for i := len(choices) - 1; i >= 0 && time.Now().Before(deadline); i-- {
		if i >= len(choices) || choices[i].Index == 0 {
			continue
		}
		try := slices.Clone(choices)
		try[i].Index = 0
		if got, ok := shows(try[:i+1]); ok {
			choices = got
		}
	}
}
