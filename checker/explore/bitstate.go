package explore

import (
	"context"
	"fmt"
	"math"
	mbits "math/bits"
	"math/rand/v2"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
)

// Bitstate search (SPIN's supertrace): depth first, remembering the states
// seen only as bits of a Bloom filter. Memory is fixed (the filter and the
// search stack), so configurations far beyond RAM can be searched, at the
// price of completeness: two states whose bits coincide look the same, and
// the second is never explored. So a bitstate search never says Holds. It
// finds a real counterexample (the stack, replayed from the initial state
// by the model's own rules) or reports Unknown, "no violation found", with a
// coverage estimate: the share of the states it met that it did not lose
// to a coincidence of bits, computed from the filter's fill at each
// insertion (a state met when a fraction f of the bits is set is lost with
// probability f^k). States lost take their descendants with them, which the
// estimate cannot see; a depth bound cuts more, which it reports.
//
// A swarm (SwarmMember) runs N such searches, each diversified (hash seed,
// successor order, depth bound), on as many cores or machines; their
// results merge (MergeSwarm) into one verdict and a combined coverage
// estimate, from a sketch of the states each one visited.

// BitstateOptions steer a bitstate search. The zero value searches with a
// 64 MiB filter, 3 hash functions, generation order and no depth bound.
type BitstateOptions struct {
	Bytes    int64  // filter size in bytes, rounded down to a power of two (0: 64 MiB)
	Hashes   int    // bits set per state (0: 3)
	Seed     uint64 // hash seed; also seeds the successor order when Shuffle is set
	Shuffle  bool   // visit successors in a random order (drawn from Seed) instead of the rules' order
	MaxDepth int    // depth bound (0: none)
}

// BitstateStats are what a bitstate search reports besides its Result.
type BitstateStats struct {
	FilterBytes int64
	Hashes      int
	Fill        float64 // share of the filter's bits set at the end
	Coverage    float64 // estimated share of the states met that were explored
	Lost        float64 // estimated states lost to coinciding bits
	Cut         int64   // successors not explored because of the depth bound
	MaxDepth    int     // deepest stack reached
	Complete    bool    // the search ran to its end: no budget stopped it
	Sketch      *Sketch // the states visited, for merging swarm results
}

// Bitstate searches c for the safety property (opts.Property must be "" or
// Safety): every invariant of opts.Invariants, the take check and the
// no-stuck-state check. opts.Symmetry, MaxStates, Timeout and Progress apply;
// Parallel, MaxBytes and Compact do not (the memory is the filter's).
func Bitstate(ctx context.Context, c model.Config, opts Options, b BitstateOptions) (*Result, *BitstateStats, error) {
	if opts.Property != "" && opts.Property != Safety {
		return nil, nil, fmt.Errorf("a bitstate search checks the safety property only (not %s)", opts.Property)
	}
	opts.Property = Safety
	e, stop, err := newSearch(ctx, c, opts)
	if err != nil {
		return nil, nil, err
	}
	defer stop()
	if b.Bytes < 0 || b.Hashes < 0 || b.MaxDepth < 0 {
		return nil, nil, fmt.Errorf("bitstate: negative size, hash count or depth bound")
	}
	if b.Bytes == 0 {
		b.Bytes = 64 << 20
	}
	if b.Bytes < 8 {
		return nil, nil, fmt.Errorf("bitstate: a filter of %d bytes is too small", b.Bytes)
	}
	// The filter is allocated at once: a size the machine cannot hold would
	// end the process instead of returning an error.
	if b.Bytes > maxFilterBytes {
		return nil, nil, fmt.Errorf("bitstate: a filter of %d MiB is larger than the largest supported (%d MiB)", b.Bytes>>20, int64(maxFilterBytes)>>20)
	}
	if ram := physicalMemory(); ram > 0 && filterBytes(b.Bytes) > ram*7/8 {
		return nil, nil, fmt.Errorf("bitstate: a filter of %d MiB does not fit in this machine's memory (%d MiB)", filterBytes(b.Bytes)>>20, ram>>20)
	}
	if b.Hashes == 0 {
		b.Hashes = 3
	}
	if b.Hashes > 16 {
		return nil, nil, fmt.Errorf("bitstate: at most 16 hash functions (got %d)", b.Hashes)
	}
	s := &bitSearch{e: e, b: b, filter: make([]uint64, filterBytes(b.Bytes)/8), sketch: NewSketch()}
	s.mask = uint64(len(s.filter))*64 - 1
	if b.Shuffle {
		s.rng = rand.New(rand.NewPCG(b.Seed, b.Seed^0x9e3779b97f4a7c15))
	}
	e.start = time.Now()
	e.phase = "bitstate"
	e.res = &Result{Property: string(Safety), Config: e.cfg}
	r := s.run()
	r.States = s.stored
	r.Transitions = e.transitions
	r.Depth = s.maxDepth
	r.Elapsed = time.Since(e.start)
	r.Bytes = int64(len(s.filter)) * 8
	r.Workers = 1
	fill := float64(s.set) / float64(s.mask+1)
	st := &BitstateStats{FilterBytes: r.Bytes, Hashes: b.Hashes, Fill: fill, Lost: s.lost, Cut: s.cut, MaxDepth: s.maxDepth, Sketch: s.sketch}
	st.Coverage = 1
	if s.stored > 0 {
		st.Coverage = float64(s.stored) / (float64(s.stored) + s.lost)
	}
	st.Complete = r.Verdict != checker.Violated && r.Message == ""
	if r.Verdict != checker.Violated {
		why := r.Message
		r.Verdict = checker.Unknown
		r.Message = fmt.Sprintf("no violation found, coverage estimate %.2f %%", 100*st.Coverage)
		if s.cut > 0 {
			r.Message += fmt.Sprintf(" of the states met; the depth bound %d cut %d successors", b.MaxDepth, s.cut)
		}
		if why != "" {
			r.Message += " (" + why + ")"
		}
	}
	return r, st, nil
}

type bitSearch struct {
	e      *explorer
	b      BitstateOptions
	filter []uint64
	mask   uint64
	set    int64 // bits set
	rng    *rand.Rand
	sketch *Sketch

	stored   int64
	lost     float64
	cut      int64
	maxDepth int
}

// frame is one state on the search stack: its successors (steps and packed
// real states) and the next one to try.
type frame struct {
	steps []model.Step
	succ  []uint64
	next  int
}

// seen sets the k bits of the canonical packed state w and reports whether
// they were all set already.
func (s *bitSearch) seen(w []uint64) bool {
	h := s.b.Seed ^ 0x9e3779b97f4a7c15
	for _, x := range w {
		h ^= x
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 31
		h *= 0x94d049bb133111eb
		h ^= h >> 29
	}
	h1, h2 := h, (h>>32|h<<32)|1
	old := true
	for i := 0; i < s.b.Hashes; i++ {
		bit := (h1 + uint64(i)*h2) & s.mask
		word, m := bit>>6, uint64(1)<<(bit&63)
		if s.filter[word]&m == 0 {
			s.filter[word] |= m
			s.set++
			old = false
		}
	}
	return old
}

func (s *bitSearch) run() *Result {
	e := s.e
	words := e.lay.Words()
	cur, next, canon := e.m.Init(), e.m.Init(), e.m.Init()
	buf, cbuf := make([]uint64, words), make([]uint64, words)
	var stack, pool []*frame // pool[d] is reused for the frame at depth d
	var path []model.Step    // path[d-1] is the step into stack[d]
	// visit records a new state and pushes its frame; it returns a
	// violation, if the state or one of its steps breaks the property.
	visit := func(s0 *model.State) *Result {
		if inv, err := e.checkInvariants(s0); inv != nil {
			return s.violation(path, nil, inv.Name, err.Error())
		}
		d := len(path)
		if d == len(pool) {
			pool = append(pool, &frame{})
		}
		f := pool[d]
		f.steps, f.succ, f.next = f.steps[:0], f.succ[:0], 0
		stack = append(stack[:d], f)
		var bad *Result
		count := 0
		e.m.Next(s0, next, func(step model.Step, nx *model.State, err error) bool {
			count++
			e.transitions++
			if err != nil {
				bad = s.violation(path, &step, TakeQueuedOnly, err.Error())
				return false
			}
			if !e.lay.Pack(nx, buf) {
				bad = s.violation(path, &step, model.Invariants[1].Name, "a queue grew longer than any correct run allows")
				return false
			}
			f.steps = append(f.steps, step)
			f.succ = append(f.succ, buf...)
			return true
		})
		if bad != nil {
			return bad
		}
		if count == 0 && !s0.AllDone() {
			return s.violation(path, nil, model.NoStuckState, "no rule is enabled but not every task is DONE: "+stuckTasks(s0))
		}
		if s.rng != nil {
			s.rng.Shuffle(len(f.steps), func(a, b int) {
				f.steps[a], f.steps[b] = f.steps[b], f.steps[a]
				for k := 0; k < words; k++ {
					f.succ[a*words+k], f.succ[b*words+k] = f.succ[b*words+k], f.succ[a*words+k]
				}
			})
		}
		return nil
	}
	// The initial state.
	init := e.m.Init()
	canon.CopyFrom(init)
	if e.sym != nil {
		e.sym.canon(canon)
	}
	e.lay.Pack(canon, cbuf)
	s.seen(cbuf)
	s.sketch.Add(cbuf)
	s.stored = 1
	if r := visit(init); r != nil {
		return r
	}
	lastReport := time.Now()
	for len(stack) > 0 {
		d := len(stack) - 1
		f := stack[d]
		if f.next == len(f.steps) {
			stack = stack[:d]
			if d > 0 {
				path = path[:d-1]
			}
			continue
		}
		k := f.next
		f.next++
		if s.b.MaxDepth > 0 && d+1 > s.b.MaxDepth {
			s.cut++
			continue
		}
		w := f.succ[k*words : (k+1)*words]
		e.lay.Unpack(w, cur)
		canon.CopyFrom(cur)
		if e.sym != nil {
			e.sym.canon(canon)
			e.lay.Pack(canon, cbuf)
		} else {
			copy(cbuf, w)
		}
		fill := float64(s.set) / float64(s.mask+1)
		if s.seen(cbuf) {
			continue
		}
		p := math.Pow(fill, float64(s.b.Hashes))
		s.lost += p / (1 - p)
		s.stored++
		s.sketch.Add(cbuf)
		path = append(path, f.steps[k])
		if d+1 > s.maxDepth {
			s.maxDepth = d + 1
		}
		if r := visit(cur); r != nil {
			return r
		}
		if s.stored&1023 == 0 {
			if why := e.budget(s.stored); why != "" {
				e.res.Message = why
				return e.res
			}
			if e.opts.Progress != nil && time.Since(lastReport) >= time.Second {
				lastReport = time.Now()
				e.opts.Progress(Progress{Phase: e.phase, States: s.stored, Transitions: e.transitions, Depth: len(path), Frontier: int64(len(stack)), Elapsed: time.Since(e.start)})
			}
		}
	}
	return e.res
}

// violation builds the counterexample from the initial state along path
// (and step, if the violation is a step), applying each step by the rules.
func (s *bitSearch) violation(path []model.Step, step *model.Step, prop, msg string) *Result {
	e := s.e
	r := e.res
	r.Verdict, r.Property, r.Message = checker.Violated, prop, msg
	cur := e.m.Init()
	cx := &Counterexample{Init: cur.Clone(), Loop: -1}
	for k, st := range path {
		nx := cur.Clone()
		if err := e.m.Apply(nx, st); err != nil {
			cx.Incomplete = fmt.Sprintf("the counterexample could not be rebuilt past step %d: %v", k+1, err)
			r.Counterexample = cx
			return r
		}
		cx.Steps = append(cx.Steps, CexStep{Step: st, State: nx})
		cur = nx
	}
	if step != nil {
		cx.Steps = append(cx.Steps, CexStep{Step: *step})
	}
	r.Counterexample = cx
	return r
}

// maxFilterBytes is the largest bitstate filter: 1 TiB, 2^43 bits, which
// the filter's 64-bit bit indices address with room to spare.
const maxFilterBytes = 1 << 40

// filterBytes is the size of the filter for a request of n bytes: n rounded
// down to a power of two.
func filterBytes(n int64) int64 {
	return 8 << (mbits.Len64(uint64(n/8)) - 1)
}
