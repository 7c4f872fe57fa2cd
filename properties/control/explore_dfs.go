package control

import (
	"fmt"
	"hash/maphash"
)

// DFS is Explore's strategy, for a caller that runs the program itself:
// each run follows the choices of the last one up to its last decision
// with an untried alternative, takes the next alternative there, and
// chooses 0 (no preemption) after it. Call Next after each run; it reports
// false when every schedule (within the preemption bound) was run.
//
// Without ExploreConfig.StateKey the search is stateless, as Explore's.
// With it, DFS caches states: the decisions of a run are grouped into
// blocks of consecutive decisions with the same key, and the first block
// that reaches a key owns it. Only the first BlockDepth decisions of a
// block get alternatives: the later ones stay in a state already expanded
// by the block's first decisions (for execspec, the decisions of a worker
// parking or shutting down, which change no model state). A decision whose
// key is owned by a block on another branch of the search tree is cut:
// neither it nor any later decision of the run gets alternatives, since
// the subtree below that state was (or is being) explored where the state
// was first reached. Decisions after a cut register no key, so that a
// state is always expanded where it is owned.
//
// Even with the program's whole state as the key, a preemption bound makes
// the cut incomplete (the owner may have had fewer preemptions left than
// the cut decision), as in any bounded search with state caching. Keyed by
// an abstraction (execspec keys it by the model state a run has reached),
// it is a heuristic reduction: two runs in the same model state may differ
// in what the model does not show (which goroutine is parked where, a
// worker between two steps of its loop, a local variable of the program),
// and a schedule that only the cut branch leads to is never run. It trades
// completeness over schedules for reaching more distinct states within a
// budget.
type DFS struct {
	bound   int
	depth   int
	key     func() (string, bool)
	prefix  []dfsChoice // choices to make, the last one new
	trail   []dfsChoice // choices made in the current run
	cut     int         // the first cut decision of the run, or -1
	owner   map[string]uint64
	seed    maphash.Seed
	started bool
	err     error

	// Cuts counts the runs that reached an owned state on another branch.
	Cuts int
}

type dfsChoice struct {
	index, of   int
	curRunnable bool
	key         string
	keyed       bool
	off         int    // decisions before this one in its block
	node, entry uint64 // the hash of the choices up to this one; of its block's start
}

// NewDFS returns the strategy of an exploration bounded by cfg's
// MaxPreemptions (MaxRuns and Config are the caller's).
func NewDFS(cfg ExploreConfig) *DFS {
	depth := cfg.BlockDepth
	if depth <= 0 {
		depth = 1
	}
	return &DFS{bound: cfg.MaxPreemptions, depth: depth, key: cfg.StateKey, owner: map[string]uint64{}, seed: maphash.MakeSeed(), cut: -1}
}

// Begin implements the optional Begin method of a Strategy.
func (d *DFS) Begin() {
	d.started = true
	d.trail = d.trail[:0]
	d.err = nil
	d.cut = -1
}

// Choose implements Strategy.
func (d *DFS) Choose(dc Decision) int {
	i := len(d.trail)
	idx := 0
	if i < len(d.prefix) {
		p := d.prefix[i]
		if p.of != len(dc.Runnable) {
			d.err = fmt.Errorf("%w: the program is not deterministic under control: at decision %d, %d goroutines can run; an earlier run with the same choices had %d", ErrDiverged, i, len(dc.Runnable), p.of)
			return -1
		}
		idx = p.index
	}
	c := dfsChoice{index: idx, of: len(dc.Runnable), curRunnable: dc.CurrentRunnable}
	if d.key != nil {
		var parent uint64
		if i > 0 {
			parent = d.trail[i-1].node
		}
		c.node = maphash.Comparable(d.seed, [3]uint64{parent, uint64(idx), uint64(c.of)})
		c.key, c.keyed = d.key()
		if c.keyed && d.cut < 0 {
			c.entry = parent
			if i > 0 && d.trail[i-1].keyed && d.trail[i-1].key == c.key {
				c.entry = d.trail[i-1].entry
				c.off = d.trail[i-1].off + 1
			}
			if o, ok := d.owner[c.key]; !ok {
				d.owner[c.key] = c.entry
			} else if o != c.entry {
				d.cut = i
				d.Cuts++
			}
		}
	}
	d.trail = append(d.trail, c)
	return idx
}

// Err returns why the last run stopped, if the strategy stopped it.
func (d *DFS) Err() error { return d.err }

// States returns how many distinct keys the search has reached (0 without
// StateKey).
func (d *DFS) States() int { return len(d.owner) }

// Next sets the prefix of the next run: the trail up to its last choice
// that has an untried alternative within the preemption bound, and before
// the run's cut, with that alternative. It reports false when none is
// left.
func (d *DFS) Next() bool {
	end := len(d.trail)
	if d.cut >= 0 {
		end = d.cut
	}
	bound := d.bound
	preempts := 0
	if bound > 0 {
		for _, c := range d.trail[:end] {
			if c.curRunnable && c.index != 0 {
				preempts++
			}
		}
	}
	for i := end - 1; i >= 0; i-- {
		c := d.trail[i]
		if bound > 0 && c.curRunnable && c.index != 0 {
			preempts-- // preemptions in trail[:i]
		}
		if c.index+1 >= c.of || (c.keyed && c.off >= d.depth) {
			continue
		}
		if bound > 0 && c.curRunnable && c.index == 0 && preempts+1 > bound {
			continue
		}
		d.prefix = append(d.prefix[:0], d.trail[:i]...)
		d.prefix = append(d.prefix, dfsChoice{index: c.index + 1, of: c.of, curRunnable: c.curRunnable})
		return true
	}
	return false
}

// Reset forgets the prefix, so that the next run starts the search over;
// the owned keys are kept.
func (d *DFS) Reset() { d.prefix = d.prefix[:0] }
