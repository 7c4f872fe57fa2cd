package coverage

import (
	"math/rand/v2"

	"github.com/execspec/execspec/checker/cover"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/traces"
)

// Model-guided exploration (Run's "guided" strategy).
//
// Each run first aims at a state of the model that no run has visited: the
// model checker's shortest path to it (cover.Space.Path) is realized on
// the real executor as a schedule plus a workload. Each step of the path
// names the process that takes it, and so the controlled goroutine to run:
//
//	step                         goroutine                 workload
//	SPAWN                        the spawner (main)        —
//	POLL-LOCAL, GLOBAL-STEAL,    worker w                  —
//	WORKER-STEAL, POLL-PENDING,
//	TASK-SUSPEND, TASK-COMPLETE
//	WAKE onto the global queue   the task's event source   —
//	WAKE onto w's local queue    worker w                  the future that w is
//	                                                       polling wakes the task
//
// At each decision the guide runs the goroutine of the path's next step
// until the event of that step is recorded, then moves to the next step.
// Which goroutine is which is learned from the events each one records
// (and guessed, before that, from the order they were started in). A
// recorded rule event that is not the path's next step means the run left
// the path (the executor made a choice the model's shortest path did not,
// such as another victim); from there, and after the path's end, the
// choices are random.
//
// When a target is not reached in two attempts it is set aside. Once every
// state was aimed at, each transition not yet taken is, once (the path to
// the state it leaves, then the transition). When no target is left the
// runs are coverage-guided: the schedules (and
// workload draws) of runs that visited new states are kept in a corpus,
// and a run replays a random prefix of one of them, then chooses at
// random, like a fuzzer's mutation of a seed input.

// guided is the state of the guided strategy across runs.
type guided struct {
	sp       *cover.Space
	cv       *cover.Coverage
	rng      *rand.Rand
	targets  []int32 // states to aim at, in random order
	pos      int
	edges    []int32 // then transitions, in random order
	epos     int
	attempts map[int32]int
	corpus   []corpusEntry

	// figures
	Paths, Realized, Mutations int
}

type corpusEntry struct {
	choices []control.Choice
	wl      *coverWorkload
}

func newGuided(sp *cover.Space, cv *cover.Coverage, seed uint64) *guided {
	g := &guided{sp: sp, cv: cv, rng: rand.New(rand.NewPCG(seed, 0x6a1de)), attempts: map[int32]int{}}
	for id := 1; id < sp.States(); id++ {
		if !sp.Excluded(id) {
			g.targets = append(g.targets, int32(id))
		}
	}
	g.rng.Shuffle(len(g.targets), func(i, j int) { g.targets[i], g.targets[j] = g.targets[j], g.targets[i] })
	for e := range sp.Transitions() {
		if !sp.ExcludedTransition(e) {
			g.edges = append(g.edges, int32(e))
		}
	}
	g.rng.Shuffle(len(g.edges), func(i, j int) { g.edges[i], g.edges[j] = g.edges[j], g.edges[i] })
	return g
}

// next returns the strategy, the guide (nil for a mutation run) and the
// workload of the next run; wl is a fresh draw it may use.
func (gd *guided) next(wl *coverWorkload) (control.Strategy, *guide, *coverWorkload) {
	for gd.pos < len(gd.targets) {
		t := gd.targets[gd.pos]
		if gd.cv.Visited(int(t)) || gd.attempts[t] >= 2 {
			gd.pos++
			continue
		}
		gd.attempts[t]++
		gd.Paths++
		g := newGuide(gd.sp.Config(), gd.sp.Path(int(t)), gd.rng.Uint64())
		return g, g, wl
	}
	for gd.epos < len(gd.edges) {
		e := gd.edges[gd.epos]
		gd.epos++
		if gd.cv.VisitedEdge(int(e)) {
			continue
		}
		gd.Paths++
		g := newGuide(gd.sp.Config(), gd.sp.TransitionPath(int(e)), gd.rng.Uint64())
		return g, g, wl
	}
	if len(gd.corpus) > 0 {
		e := gd.corpus[gd.rng.IntN(len(gd.corpus))]
		gd.Mutations++
		m := &prefix{choices: e.choices, cut: gd.rng.IntN(len(e.choices) + 1), rest: control.Random(gd.rng.Uint64())}
		if gd.rng.IntN(2) == 0 {
			wl = e.wl
		}
		return m, nil, wl
	}
	return control.Random(gd.rng.Uint64()), nil, wl
}

// done learns from a finished run: a run that found new states joins the
// corpus.
func (gd *guided) done(g *guide, wl *coverWorkload, s control.Schedule, pr cover.ProjectResult) {
	if g != nil && !g.diverged && g.k == len(g.path) {
		gd.Realized++
	}
	if pr.NewStates > 0 && len(s.Choices) > 0 {
		gd.corpus = append(gd.corpus, corpusEntry{choices: s.Choices, wl: wl})
	}
}

// prefix replays the first cut choices of a recorded schedule (where they
// still fit), then defers to rest.
type prefix struct {
	choices []control.Choice
	cut     int
	rest    control.Strategy
}

func (p *prefix) Choose(d control.Decision) int {
	if d.N < p.cut && d.N < len(p.choices) && p.choices[d.N].Index < len(d.Runnable) {
		return p.choices[d.N].Index
	}
	return p.rest.Choose(d)
}

// guide realizes one path of the model in one run.
type guide struct {
	W, T     int
	lcap     int
	path     []model.Step
	k        int // the next step of the path
	diverged bool
	rest     control.Strategy

	pend []traces.Event // events recorded since the last decision
	gid  []int          // per process (0 main, 1+w worker w, 1+W+t-1 event source of t): its goroutine, -1 unknown
}

func newGuide(c model.Config, path []model.Step, seed uint64) *guide {
	g := &guide{W: c.Workers, T: c.Tasks, lcap: c.LocalCap, path: path, rest: control.Random(seed)}
	// The order goroutines are started in (coverRun): main; each task's
	// event source; the workers (a worker's guess is corrected by its
	// first event).
	g.gid = make([]int, 1+g.W+g.T)
	for t := 1; t <= g.T; t++ {
		g.gid[1+g.W+t-1] = t
	}
	for w := range g.W {
		g.gid[1+w] = 1 + g.T + w
	}
	return g
}

// active reports whether the guide still follows its path.
func (g *guide) active() bool { return !g.diverged && g.k < len(g.path) }

// observe is called by the recorder for every event, on the goroutine
// that records it, while it is the one controlled goroutine running.
func (g *guide) observe(e traces.Event) { g.pend = append(g.pend, e) }

// wakeRequest returns the task (from 1) that the future polled on worker
// should wake now, or 0. The future calls it again after each wake, so
// that several wakes of the path in a row happen in one poll.
func (g *guide) wakeRequest(worker int) int {
	g.advance(-1)
	if !g.active() {
		return 0
	}
	st := g.path[g.k]
	if st.Rule == model.WAKE && st.Dest == worker {
		return st.Task
	}
	return 0
}

// process returns the process of the path's step st.
func (g *guide) process(st model.Step) int {
	switch st.Rule {
	case model.SPAWN:
		return 0
	case model.WAKE:
		if st.Dest >= 0 {
			return 1 + st.Dest
		}
		return 1 + g.W + st.Task - 1
	}
	return 1 + st.Worker
}

// eventProcess returns the process that recorded e, or -1 if e does not
// say.
func (g *guide) eventProcess(e traces.Event) int {
	switch {
	case e.Worker >= 0:
		return 1 + int(e.Worker)
	case e.Kind == traces.KindSpawn:
		return 0
	case e.Kind == traces.KindWake && e.Task >= 1 && int(e.Task) <= g.T:
		return 1 + g.W + int(e.Task) - 1
	}
	return -1
}

// ruleEvent reports whether e stands for a rule instance.
func ruleEvent(e traces.Event) bool {
	switch e.Kind {
	case traces.KindSpawn, traces.KindTake, traces.KindRegister, traces.KindPollEnd, traces.KindWake:
		return true
	}
	return false
}

// matches reports whether rule event e is the instance st.
func (g *guide) matches(st model.Step, e traces.Event) bool {
	if int(e.Task) != st.Task {
		return false
	}
	switch e.Kind {
	case traces.KindSpawn:
		return st.Rule == model.SPAWN
	case traces.KindTake:
		r := model.POLL_LOCAL
		switch e.Source {
		case traces.SourceGlobal:
			r = model.GLOBAL_STEAL
		case traces.SourceSteal:
			r = model.WORKER_STEAL
		}
		return st.Rule == r && st.Worker == int(e.Worker) && (r != model.WORKER_STEAL || st.Victim == int(e.Victim))
	case traces.KindRegister:
		return st.Rule == model.POLL_PENDING && st.Worker == int(e.Worker)
	case traces.KindPollEnd:
		if e.Result == traces.ResultPending {
			return st.Rule == model.TASK_SUSPEND && st.Worker == int(e.Worker)
		}
		return st.Rule == model.TASK_COMPLETE && st.Worker == int(e.Worker)
	case traces.KindWake:
		if st.Rule != model.WAKE {
			return false
		}
		if e.Outcome == traces.OutcomeScheduled && g.lcap > 0 {
			return st.Dest == int(e.Worker) || (st.Dest == model.Global && e.Worker < 0)
		}
		return true
	}
	return false
}

// advance follows the path with the events recorded since the last call;
// cur is the goroutine that recorded them, or -1 if unknown.
func (g *guide) advance(cur int) {
	for _, e := range g.pend {
		if p := g.eventProcess(e); p >= 0 && cur >= 0 {
			g.gid[p] = cur
		}
		if !g.active() || !ruleEvent(e) {
			continue
		}
		if g.matches(g.path[g.k], e) {
			g.k++
		} else {
			g.diverged = true
		}
	}
	g.pend = g.pend[:0]
}

// Choose implements control.Strategy.
func (g *guide) Choose(d control.Decision) int {
	g.advance(d.Current)
	if g.active() {
		want := g.gid[g.process(g.path[g.k])]
		for i, r := range d.Runnable {
			if r == want {
				return i
			}
		}
	}
	return g.rest.Choose(d)
}
