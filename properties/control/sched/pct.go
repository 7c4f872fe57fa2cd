package sched

import (
	"math/rand/v2"
	"slices"
)

// PCT is probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi,
// Nagarakatte, "A Randomized Scheduler with Probabilistic Guarantees of
// Finding Bugs", ASPLOS 2010). Each goroutine gets a random priority when it
// first appears; at every decision the runnable goroutine with the highest
// priority runs; at d-1 change points, steps drawn uniformly from [1, k],
// the goroutine that just took that step drops to a priority below every
// initial one. For a program with n goroutines and k steps, a run finds a
// bug of depth d (d ordering constraints between steps) with probability at
// least 1/(n·k^(d-1)) — far better than random choices for bugs that need a
// goroutine to run for a long stretch and then be overtaken exactly once.
//
// k is the Steps given to NewPCT, or, if zero, the largest number of steps
// seen in the runs so far (the first run then has no change points).
//
// A PCT carries its random stream from run to run and must be used by one
// Controller at a time. Its zero value is not usable; call NewPCT or
// NewPCTFunc.
type PCT struct {
	depth int
	steps int // k, 0 = learn
	seen  int // largest number of steps of a run so far
	intn  func(n int) int

	order   []int // goroutines not lowered, highest priority first
	known   []bool
	lowered []int // lowered[g] > 0: g's priority after its change point
	changes []change
	next    int // first change not yet applied
}

type change struct{ step, prio int }

// NewPCT returns a PCT strategy for bugs of depth depth (≥ 1) in runs of
// about steps yield points (0: learn it from the runs), seeded with seed.
func NewPCT(depth, steps int, seed uint64) *PCT {
	r := rand.New(rand.NewPCG(seed, 0x5851f42d4c957f2d))
	return NewPCTFunc(depth, steps, r.IntN)
}

// NewPCTFunc returns a PCT strategy whose priorities and change points
// are drawn by intn (a uniform draw from [0, n)): control.RapidPCT draws
// them from a rapid test so that they shrink with the workload.
func NewPCTFunc(depth, steps int, intn func(n int) int) *PCT {
	return &PCT{depth: max(depth, 1), steps: steps, intn: intn}
}

// Depth returns d.
func (p *PCT) Depth() int { return p.depth }

// Bound returns n·k^(d-1), the number of runs within which PCT expects to
// find a bug of depth d in a program of n goroutines and k steps.
func (p *PCT) Bound(n int) int {
	k := p.k()
	b := n
	for range p.depth - 1 {
		b *= max(k, 1)
	}
	return b
}

func (p *PCT) k() int {
	if p.steps > 0 {
		return p.steps
	}
	return p.seen
}

// Begin draws the change points of the next run; Run calls it.
func (p *PCT) Begin() {
	p.order = p.order[:0]
	p.known = p.known[:0]
	p.lowered = p.lowered[:0]
	p.changes = p.changes[:0]
	p.next = 0
	if k := p.k(); k > 0 {
		for i := range p.depth - 1 {
			p.changes = append(p.changes, change{step: 1 + p.intn(k), prio: p.depth - 1 - i})
		}
		slices.SortStableFunc(p.changes, func(a, b change) int { return a.step - b.step })
	}
}

// End learns the number of steps of a run; Run calls it.
func (p *PCT) End(steps int) { p.seen = max(p.seen, steps) }

func (p *PCT) meet(g int) {
	for len(p.known) <= g {
		p.known = append(p.known, false)
		p.lowered = append(p.lowered, 0)
	}
	if !p.known[g] {
		p.known[g] = true
		// A new goroutine takes a uniformly random place among the
		// initial priorities.
		p.order = slices.Insert(p.order, p.intn(len(p.order)+1), g)
	}
}

// Choose runs the runnable goroutine of highest priority, after lowering
// the current goroutine if it just passed a change point.
func (p *PCT) Choose(d Decision) int {
	p.meet(d.Current)
	for _, g := range d.Runnable {
		p.meet(g)
	}
	for p.next < len(p.changes) && p.changes[p.next].step <= d.Step {
		g := d.Current
		if p.lowered[g] == 0 {
			if i := slices.Index(p.order, g); i >= 0 {
				p.order = slices.Delete(p.order, i, i+1)
			}
		}
		p.lowered[g] = p.changes[p.next].prio
		p.next++
	}
	best, bestPrio := 0, -1
	for i, g := range d.Runnable {
		var prio int
		if l := p.lowered[g]; l > 0 {
			prio = l // below every initial priority
		} else {
			prio = p.depth + len(p.order) - slices.Index(p.order, g)
		}
		if prio > bestPrio {
			best, bestPrio = i, prio
		}
	}
	return best
}
