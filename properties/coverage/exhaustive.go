package coverage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/traces"
)

// Bounded exhaustive exploration (Run's "exhaustive" and "dfs"
// strategies).
//
// Both run control.DFS over the schedules of one workload draw, depth
// first, optionally bounded by preemptions; when the schedules of a draw
// are exhausted the next draw starts the search over. "dfs" is the
// stateless search of control.Explore. "exhaustive" caches states: at each
// decision of a run it knows the model state reached so far (the events
// recorded up to that decision, checked by a Conformance of the open
// model, plus the register and wake events of each task, which the closed
// model's workload counts), and a decision whose model state was first
// reached on another branch of the search gets no alternatives, nor does
// any later decision of that run; of consecutive decisions in the same
// model state, only the first gets alternatives (control.DFS, BlockDepth
// 1).
//
// This is a coverage-directed heuristic, not a sound reduction for the
// real program: the model state leaves out what the executor holds beyond
// the model (which goroutine is parked, a worker between two steps of its
// loop, a wake made inside a future but not yet recorded), so two runs in
// the same model state can go on differently, and the schedules below the
// cut decision are never run. What it buys is that the search spends its
// runs on decisions that lead to model states not yet expanded, rather
// than varying the last decisions of a run (shutdown and parking), which
// leave the model state as it is.

// ExhaustiveStats are the figures of the exhaustive and dfs strategies.
type ExhaustiveStats struct {
	// Draws is the number of workload draws whose schedules were
	// searched (the last one perhaps in part).
	Draws int `json:"draws"`
	// Cuts counts the runs that reached a model state first reached on
	// another branch (exhaustive only); States the distinct model states
	// the search keyed its decisions by.
	Cuts   int `json:"cuts"`
	States int `json:"keyed_states"`
	// Diverged counts the runs that did not replay their prefix (the
	// search of that draw was given up).
	Diverged int `json:"diverged"`
}

// exhaustive is the state of the exhaustive and dfs strategies across
// runs.
type exhaustive struct {
	dfs  *control.DFS
	h    traces.Header
	wl   *coverWorkload
	conf *conform.Conformance
	bad  bool
	pend []traces.Event
	regs []int // register events per task
	wake []int // wake events per task
	key  strings.Builder
	last string // the key, while no event came since
	have bool

	stats ExhaustiveStats
}

func newExhaustive(h traces.Header, mc model.Config, cached bool, preemptions int) *exhaustive {
	x := &exhaustive{h: h, regs: make([]int, mc.Tasks+1), wake: make([]int, mc.Tasks+1)}
	cfg := control.ExploreConfig{MaxPreemptions: preemptions}
	if cached {
		cfg.StateKey = x.stateKey
	}
	x.dfs = control.NewDFS(cfg)
	return x
}

// next returns the strategy and the workload of the next run; draw gives
// a fresh workload when the search of the last one is over.
func (x *exhaustive) next(draw func() *coverWorkload) (control.Strategy, *coverWorkload) {
	if x.wl == nil {
		x.wl = draw()
		x.stats.Draws++
	}
	x.pend = x.pend[:0]
	x.bad, x.have = false, false
	clear(x.regs)
	clear(x.wake)
	conf, err := conform.New(x.h)
	x.conf = conf
	if err != nil {
		x.bad = true
	}
	return x.dfs, x.wl
}

// observe is called for every event as it is recorded.
func (x *exhaustive) observe(e traces.Event) { x.pend = append(x.pend, e) }

// done learns from a finished run: the next prefix, or the next draw.
func (x *exhaustive) done(runErr error) {
	if runErr != nil && errors.Is(runErr, control.ErrDiverged) {
		x.stats.Diverged++
		x.dfs.Reset()
		x.wl = nil
		return
	}
	if !x.dfs.Next() {
		x.dfs.Reset()
		x.wl = nil
	}
}

func (x *exhaustive) figures() *ExhaustiveStats {
	s := x.stats
	s.Cuts, s.States = x.dfs.Cuts, x.dfs.States()
	return &s
}

// stateKey is the DFS's StateKey: the model state reached by the events
// recorded so far.
func (x *exhaustive) stateKey() (string, bool) {
	if x.bad {
		return "", false
	}
	if x.have && len(x.pend) == 0 {
		return x.last, true
	}
	traces.SortBySeq(x.pend)
	for _, e := range x.pend {
		if err := x.conf.Step(e); err != nil {
			x.bad = true
			return "", false
		}
		if t := int(e.Task); t >= 1 && t < len(x.regs) {
			switch e.Kind {
			case traces.KindRegister:
				x.regs[t]++
			case traces.KindWake:
				x.wake[t]++
			}
		}
	}
	x.pend = x.pend[:0]
	x.key.Reset()
	x.key.WriteString(x.conf.Lanes())
	for t := 1; t < len(x.regs); t++ {
		fmt.Fprintf(&x.key, " %d/%d", x.regs[t], x.wake[t])
	}
	x.last, x.have = x.key.String(), true
	return x.last, true
}

// drawFor returns the workload draw function of Run's loop.
func drawFor(mc model.Config, rng *rand.Rand) func() *coverWorkload {
	return func() *coverWorkload { return drawWorkload(mc, rng) }
}
