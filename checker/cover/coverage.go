package cover

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"unsafe"

	"github.com/execspec/execspec/model"
)

// Spec coverage: how much of a closed model's state space the runs of a real
// executor went through.
//
// A Space is the reachable state space of one closed configuration
// (model.New): every state, packed as the model checker stores it, and every
// transition (an enabled rule instance in a reachable state, as the model
// checker counts them). A Coverage accumulates what recorded runs visited,
// projected onto that space (Project, in coverage_project.go). A report
// gives visited / reachable states and transitions, the firings of every
// rule variant, and the unvisited states grouped into classes.
//
// Some states cannot be produced by an executor by design. Exclusions are
// declared values, each a predicate on a rule instance in a state (what an
// executor cannot do, and why); the excluded states are computed from the
// model: those reachable only through an excluded instance. They are
// reported apart and left out of the "reachable by the executor" figures.

// Exclusion is a rule instance an executor cannot take by design. Applies
// reports whether the step st in state s is one of them.
type Exclusion struct {
	Name    string
	Doc     string
	Rule    model.Rule
	Applies func(s *model.State, st model.Step) bool
}

// WakeOntoIdleWorker excludes a WAKE that pushes onto the local queue of a
// worker that is not polling. A waker runs on a worker's thread only inside
// a poll (the future, or another task's future, calls it), so an executor
// that pushes a wake onto the waking worker's local queue never pushes onto
// an idle worker's. The model's event source may wake onto any worker's
// queue at any time.
var WakeOntoIdleWorker = Exclusion{
	Name: "wake-onto-idle-worker",
	Doc:  "a wake onto the local queue of a worker that is not polling: a waker runs on a worker's thread only inside a poll",
	Rule: model.WAKE,
	Applies: func(s *model.State, st model.Step) bool {
		return st.Rule == model.WAKE && st.Dest >= 0 && s.Cur[st.Dest] == 0
	},
}

// DefaultExclusions are the exclusions every built-in executor has.
var DefaultExclusions = []Exclusion{WakeOntoIdleWorker}

// Options configure NewSpace. The zero value uses
// DefaultExclusions and no state budget.
type Options struct {
	// Exclusions; nil means DefaultExclusions, an empty non-nil slice none.
	Exclusions []Exclusion
	// MaxStates bounds the space (0: none); NewSpace fails beyond it.
	MaxStates int
}

// Space is the reachable state space of one closed configuration,
// with its transitions, their rule variants and the exclusions. It is
// immutable once built and safe for concurrent use. Memory: about
// (8·words + 24) bytes per state and 12 bytes per transition.
type Space struct {
	cfg   model.Config
	m     *model.Model
	lay   *model.Layout
	words int

	packed []uint64         // state i is packed[i*words : (i+1)*words]
	index  map[string]int32 // packed bytes → state id
	depth  []int32          // BFS depth of each state
	vhash  []uint64         // visibleHash of each state

	// Transitions of state i: edges[first[i]:first[i+1]], in the order
	// model.Next gives them.
	first []int32
	edges []covEdge

	variants   []string // variant names, sorted
	excluded   []bool   // per state
	via        []int32  // per state: the edge that first reached it in the breadth-first search without excluded steps; -1
	exclReason []int8   // per state: the exclusion that cut it off (index), -1
	exclusions []Exclusion

	nExclStates, nExclEdges int
}

type covEdge struct {
	dst     int32
	key     uint32 // the step, packed (stepKey)
	variant uint16
	excl    bool // excluded: an excluded step, or from an excluded state
}

// stepKey packs the fields that identify a rule instance.
func stepKey(st model.Step) uint32 {
	k := uint32(st.Rule) | uint32(st.Worker+1)&0x1f<<4 | uint32(st.Task)&0x7f<<9 |
		uint32(st.Victim+1)&0x1f<<16 | uint32(st.Dest+1)&0x1f<<21
	for i, b := range []bool{st.Failed, st.Repoll, st.Read, st.Slot} {
		if b {
			k |= 1 << (26 + i)
		}
	}
	return k
}

func keyStep(k uint32) model.Step {
	return model.Step{
		Rule:   model.Rule(k & 0xf),
		Worker: int(k>>4&0x1f) - 1,
		Task:   int(k >> 9 & 0x7f),
		Victim: int(k>>16&0x1f) - 1,
		Dest:   int(k>>21&0x1f) - 1,
		Failed: k>>26&1 == 1,
		Repoll: k>>27&1 == 1,
		Read:   k>>28&1 == 1,
		Slot:   k>>29&1 == 1,
	}
}

func wordsKey(w []uint64) string {
	if len(w) == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(w)*8))
}

// NewSpace explores the closed model of c breadth-first and returns
// its reachable space. It fails on an invalid configuration, a broken
// variant that reaches a forbidden state, or a space beyond opts.MaxStates;
// cancelling ctx stops it with ctx's error.
func NewSpace(ctx context.Context, c model.Config, opts Options) (*Space, error) {
	m, err := model.New(c)
	if err != nil {
		return nil, fmt.Errorf("coverage: %w", err)
	}
	lay, err := m.Layout()
	if err != nil {
		return nil, fmt.Errorf("coverage: %w", err)
	}
	sp := &Space{cfg: m.Config(), m: m, lay: lay, words: lay.Words(), index: map[string]int32{}}
	sp.exclusions = opts.Exclusions
	if sp.exclusions == nil {
		sp.exclusions = DefaultExclusions
	}
	variantID := map[string]uint16{}
	var variantNames []string
	buf := make([]uint64, sp.words)
	add := func(s *model.State, d int32) (int32, bool, error) {
		if !lay.Pack(s, buf) {
			return 0, false, fmt.Errorf("coverage: a state does not fit the model's layout:\n%s", s)
		}
		k := wordsKey(buf)
		if id, ok := sp.index[k]; ok {
			return id, false, nil
		}
		if opts.MaxStates > 0 && len(sp.index) >= opts.MaxStates {
			return 0, false, fmt.Errorf("coverage: more than %d reachable states (MaxStates)", opts.MaxStates)
		}
		id := int32(len(sp.index))
		sp.index[k] = id
		sp.packed = append(sp.packed, buf...)
		sp.depth = append(sp.depth, d)
		return id, true, nil
	}
	init := m.Init()
	if _, _, err := add(init, 0); err != nil {
		return nil, err
	}
	cur, next := m.Init(), m.Init()
	var stepErr error
	for i := int32(0); int(i) < len(sp.depth); i++ {
		if i&1023 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		sp.unpack(i, cur)
		sp.first = append(sp.first, int32(len(sp.edges)))
		m.Next(cur, next, func(st model.Step, n *model.State, err error) bool {
			if err != nil {
				stepErr = fmt.Errorf("coverage: the model reaches a forbidden state: %w", err)
				return false
			}
			id, _, err := add(n, sp.depth[i]+1)
			if err != nil {
				stepErr = err
				return false
			}
			name := variantOf(sp.cfg.LocalCap, cur, st, n)
			v, ok := variantID[name]
			if !ok {
				v = uint16(len(variantNames))
				variantID[name] = v
				variantNames = append(variantNames, name)
			}
			sp.edges = append(sp.edges, covEdge{dst: id, key: stepKey(st), variant: v})
			return true
		})
		if stepErr != nil {
			return nil, stepErr
		}
	}
	sp.first = append(sp.first, int32(len(sp.edges)))
	sp.vhash = make([]uint64, len(sp.depth))
	for i := range sp.vhash {
		sp.unpack(int32(i), cur)
		sp.vhash[i] = sp.visibleHash(cur)
	}
	sp.sortVariants(variantNames)
	sp.exclude()
	return sp, nil
}

// sortVariants renumbers the variants in name order, so that reports list
// them in a stable order.
func (sp *Space) sortVariants(names []string) {
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return names[order[a]] < names[order[b]] })
	renum := make([]uint16, len(names))
	sp.variants = make([]string, len(names))
	for to, from := range order {
		renum[from] = uint16(to)
		sp.variants[to] = names[from]
	}
	for i := range sp.edges {
		sp.edges[i].variant = renum[sp.edges[i].variant]
	}
}

// exclude computes the excluded states: those not reachable from the
// initial state without an excluded step.
func (sp *Space) exclude() {
	n := len(sp.depth)
	sp.excluded = make([]bool, n)
	sp.exclReason = make([]int8, n)
	reach := make([]bool, n)
	reach[0] = true
	sp.via = make([]int32, n)
	for i := range sp.via {
		sp.via[i] = -1
	}
	queue := []int32{0}
	s := sp.m.Init()
	cutBy := make([]int8, n)
	for i := range cutBy {
		cutBy[i] = -1
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		sp.unpack(i, s)
		for e := sp.first[i]; e < sp.first[i+1]; e++ {
			ed := &sp.edges[e]
			if x := sp.excludedBy(s, keyStep(ed.key)); x >= 0 {
				ed.excl = true
				if cutBy[ed.dst] < 0 {
					cutBy[ed.dst] = int8(x)
				}
				continue
			}
			if !reach[ed.dst] {
				reach[ed.dst] = true
				sp.via[ed.dst] = e
				queue = append(queue, ed.dst)
			}
		}
	}
	for i := range reach {
		sp.exclReason[i] = -1
		if !reach[i] {
			sp.excluded[i] = true
			sp.exclReason[i] = cutBy[i]
			sp.nExclStates++
			for e := sp.first[i]; e < sp.first[i+1]; e++ {
				sp.edges[e].excl = true
			}
		}
	}
	for i := range sp.edges {
		if sp.edges[i].excl {
			sp.nExclEdges++
		}
	}
}

func (sp *Space) excludedBy(s *model.State, st model.Step) int {
	for k, x := range sp.exclusions {
		if x.Applies(s, st) {
			return k
		}
	}
	return -1
}

// unpack writes state id into s (a state from sp.m.Init()).
func (sp *Space) unpack(id int32, s *model.State) {
	sp.lay.Unpack(sp.packed[int(id)*sp.words:int(id+1)*sp.words], s)
}

// lookup returns the id of s, and whether it is reachable.
func (sp *Space) lookup(s *model.State, buf []uint64) (int32, bool) {
	if !sp.lay.Pack(s, buf) {
		return 0, false
	}
	id, ok := sp.index[wordsKey(buf)]
	return id, ok
}

// Config returns the normalized configuration of the space.
func (sp *Space) Config() model.Config { return sp.cfg }

// Model returns the closed model of the space.
func (sp *Space) Model() *model.Model { return sp.m }

// States and Transitions return the size of the reachable space, as the
// model checker counts it (Explore's States and Transitions).
func (sp *Space) States() int      { return len(sp.depth) }
func (sp *Space) Transitions() int { return len(sp.edges) }

// ExcludedStates and ExcludedTransitions count what the exclusions cut off.
func (sp *Space) ExcludedStates() int      { return sp.nExclStates }
func (sp *Space) ExcludedTransitions() int { return sp.nExclEdges }

// Variants returns the names of the rule variants the space has, sorted.
func (sp *Space) Variants() []string { return append([]string(nil), sp.variants...) }

// Path returns a shortest run of the model from the initial state to state
// id that takes no excluded step, or nil for an excluded state (or the
// initial state).
func (sp *Space) Path(id int) []model.Step {
	if sp.excluded[id] {
		return nil
	}
	var rev []model.Step
	for cur := int32(id); cur != 0; {
		e := sp.via[cur]
		rev = append(rev, keyStep(sp.edges[e].key))
		cur = sp.src(e)
	}
	slices.Reverse(rev)
	return rev
}

// TransitionPath returns a run of the model that ends with transition e
// (Path to the state it leaves, then e), or nil for an excluded one.
func (sp *Space) TransitionPath(e int) []model.Step {
	if sp.edges[e].excl {
		return nil
	}
	return append(sp.Path(int(sp.src(int32(e)))), keyStep(sp.edges[e].key))
}

// ExcludedTransition reports whether transition e is excluded.
func (sp *Space) ExcludedTransition(e int) bool { return sp.edges[e].excl }

// src returns the state edge e leaves.
func (sp *Space) src(e int32) int32 {
	i, _ := slices.BinarySearch(sp.first, e+1)
	return int32(i - 1)
}

// Excluded reports whether state id is excluded.
func (sp *Space) Excluded(id int) bool { return sp.excluded[id] }

// Depth returns the length of a shortest run of the model to state id.
func (sp *Space) Depth(id int) int { return int(sp.depth[id]) }

// State returns state id, unpacked.
func (sp *Space) State(id int) *model.State {
	s := sp.m.Init()
	sp.unpack(int32(id), s)
	return s
}

// variantOf names the variant of the rule instance st from s to n: the
// rule, and the choice or case that distinguishes its instances (the
// victim of a steal, where a wake or a re-queue pushes, an overflow).
func variantOf(lcap int, s *model.State, st model.Step, n *model.State) string {
	t := st.Task
	switch st.Rule {
	case model.SPAWN:
		return "SPAWN onto " + placeName(lcap, n, t, st.Dest)
	case model.GLOBAL_STEAL:
		if st.Slot {
			return "GLOBAL-STEAL (global-check interval)"
		}
		return "GLOBAL-STEAL"
	case model.WORKER_STEAL:
		if st.Read {
			return fmt.Sprintf("WORKER-STEAL reads from w%d", st.Victim)
		}
		return fmt.Sprintf("WORKER-STEAL from w%d", st.Victim)
	case model.TASK_SUSPEND:
		switch {
		case st.Repoll:
			return "TASK-SUSPEND NOTIFIED, re-polled in its slice"
		case s.Task[t-1] == model.Notified:
			return "TASK-SUSPEND NOTIFIED, re-queued onto " + placeName(lcap, n, t, st.Worker)
		}
		return "TASK-SUSPEND → WAITING"
	case model.TASK_COMPLETE:
		switch {
		case st.Failed && n.Task[t-1] == model.Queued:
			return "TASK-COMPLETE failed, re-run"
		case st.Failed:
			return "TASK-COMPLETE failed"
		}
		return "TASK-COMPLETE"
	case model.WAKE:
		switch s.Task[t-1] {
		case model.Waiting:
			return "WAKE scheduled onto " + placeName(lcap, n, t, st.Dest)
		case model.Running:
			return "WAKE notified (RUNNING → NOTIFIED)"
		case model.Queued, model.Notified:
			return "WAKE coalesced"
		case model.Done:
			return "WAKE late"
		}
	}
	return st.Rule.String()
}

// placeName says where the model put t, pushed towards dest: "global",
// "local", or "global (local full)" for an overflow.
func placeName(lcap int, n *model.State, t, dest int) string {
	if lcap > 0 && dest >= 0 && dest < len(n.Local) {
		for _, u := range n.Local[dest] {
			if int(u) == t {
				return "local"
			}
		}
		return "global (local full)"
	}
	return "global"
}
