package explore

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
)

// Liveness on the explored graph, under weak fairness of every process (the
// spawner, each worker, each task's event source): a run is fair if no
// process stays enabled forever without taking a step.
//
// Every property here has the form "from a p-state, a q-state must come"
// (leads-to) or "if p holds infinitely often, q must come infinitely
// often". Both fail exactly when the subgraph of ¬q states holds a fair
// strongly connected component (or a stuck state, where every process is
// disabled and the run stutters) that is reachable from a p-state inside the
// subgraph (leads-to), or that contains a p-state (infinitely often).
//
// A maximal SCC C is fair iff every process either takes a step inside C or
// is disabled in some state of C: then a cycle through all of C is fair.
// If some process is enabled in every state of C and takes no step inside
// it, no cycle inside C is fair, so checking the maximal SCCs is exact.
// (This is the check TLC makes for weak fairness; SPIN's -f reaches the same
// verdicts by nested depth-first search.)

type liveSpec struct {
	name     string
	in       func(i uint32) bool // the ¬q subgraph
	p        func(i uint32) bool
	infOften bool
	task     int
	prop     Property
}

func (e *explorer) liveness(prop Property) *Result {
	n := e.st.n
	cfg := e.cfg
	// Per-state predicates, from one pass over the store.
	done := newBits(n)
	queued := make([]bits, cfg.Tasks)
	running := make([]bits, cfg.Tasks)
	for t := range queued {
		queued[t], running[t] = newBits(n), newBits(n)
	}
	const span = 1 << 14 // a multiple of 64: no two goroutines write one word of bits
	par := max(e.par, 1)
	each(par, int((n+span-1)/span), &e.busy, func(g, c int) bool {
		s := e.m.Init()
		sbuf := make([]uint64, e.lay.Words())
		for i := uint32(c) * span; i < min(uint32(c+1)*span, n); i++ {
			e.lay.Unpack(e.st.load(i, sbuf), s)
			if s.AllDone() {
				done.set(i)
			}
			for t, st := range s.Task {
				switch st {
				case model.Queued:
					queued[t].set(i)
				case model.Running, model.Notified:
					running[t].set(i)
				}
			}
		}
		return true
	})
	var specs []liveSpec
	switch prop {
	case EventuallyDone:
		specs = append(specs, liveSpec{
			name: "every task is eventually DONE",
			in:   func(i uint32) bool { return !done.get(i) },
			p:    func(i uint32) bool { return i == 0 },
		})
	case WokenPolled, Fairness:
		for t := 0; t < cfg.Tasks; t++ {
			q, r := queued[t], running[t]
			specs = append(specs, liveSpec{
				name:     fmt.Sprintf("t%d", t+1),
				in:       func(i uint32) bool { return !r.get(i) },
				p:        q.get,
				infOften: prop == Fairness,
				task:     t + 1,
			})
		}
	}
	for k := range specs {
		specs[k].prop = prop
	}
	// The specs are decided independently, on as many goroutines as the
	// exploration had; the violation reported is that of the first spec
	// that has one, whatever the timing.
	e.phase = fmt.Sprintf("liveness: %d properties", len(specs))
	e.progress(0)
	found := make([]*leadsTo, len(specs))
	var first atomic.Int64
	first.Store(int64(len(specs)))
	stop := ""
	var stopOnce sync.Once
	each(min(par, len(specs)), len(specs), &e.busy, func(g, k int) bool {
		if int64(k) > first.Load() {
			return false
		}
		if why := e.budget(int64(n)); why != "" {
			stopOnce.Do(func() { stop = why })
			return false
		}
		f, ok := e.findLeadsTo(specs[k])
		if !ok {
			stopOnce.Do(func() { stop = e.budget(int64(n)) })
			return false
		}
		if f != nil {
			found[k] = f
			for {
				old := first.Load()
				if int64(k) >= old || first.CompareAndSwap(old, int64(k)) {
					break
				}
			}
		}
		return true
	})
	if k := first.Load(); k < int64(len(specs)) {
		f := found[k]
		return e.lasso(specs[k], f.comp, f.from, f.entry, f.all)
	}
	if stop != "" {
		e.res.Verdict, e.res.Message = checker.Unknown, stop
		return e.res
	}
	e.res.Verdict = checker.Holds
	return e.res
}

// leadsTo is a fair SCC or stuck state that breaks a liveness spec: the
// components of the subgraph, the p-state from, and the state entry of the
// bad component reached from it.
type leadsTo struct {
	comp        []uint32
	from, entry uint32
	all         uint64
}

// findLeadsTo finds a fair SCC or stuck state in the subgraph sp.in that
// breaks sp, or returns nil; ok is false if the exploration's context ended
// first. It only reads the graph: specs may be decided concurrently.
func (e *explorer) findLeadsTo(sp liveSpec) (_ *leadsTo, ok bool) {
	n := e.st.n
	all := uint64(1)<<e.cfg.Procs() - 1
	if e.cfg.Procs() == 64 {
		all = ^uint64(0)
	}
	comp, ncomp, ok := e.tarjan(sp.in)
	if !ok {
		return nil, false
	}
	// Per component: processes that step inside it, processes disabled
	// somewhere in it, whether it has an internal edge, whether it holds a
	// p-state.
	taken := make([]uint64, ncomp)
	disabled := make([]uint64, ncomp)
	cyclic := make([]bool, ncomp)
	hasP := make([]bool, ncomp)
	for i := uint32(0); i < n; i++ {
		c := comp[i]
		if c == noComp {
			continue
		}
		disabled[c] |= all &^ e.enabled[i]
		if sp.p(i) {
			hasP[c] = true
		}
		for k := e.off[i]; k < e.off[i+1]; k++ {
			if comp[e.edges[k]] == c {
				taken[c] |= 1 << e.procs[k]
				cyclic[c] = true
			}
		}
	}
	badComp := func(c uint32) bool {
		stuck := disabled[c] == all // a state with nothing enabled
		return (cyclic[c] || stuck) && (taken[c]|disabled[c]) == all
	}
	var entry uint32 = noParent
	var from uint32 = noParent
	if sp.infOften {
		for i := uint32(0); i < n && entry == noParent; i++ {
			if c := comp[i]; c != noComp && hasP[c] && sp.p(i) && badComp(c) {
				entry, from = i, i
			}
		}
	} else {
		// Breadth first from the p-states, inside the subgraph.
		seen := newBits(n)
		prev := make([]uint32, n)
		var queue []uint32
		for i := uint32(0); i < n; i++ {
			if comp[i] != noComp && sp.p(i) {
				seen.set(i)
				queue = append(queue, i)
			}
		}
		for head := 0; head < len(queue) && entry == noParent; head++ {
			i := queue[head]
			if badComp(comp[i]) {
				entry = i
				break
			}
			for k := e.off[i]; k < e.off[i+1]; k++ {
				j := e.edges[k]
				if comp[j] != noComp && !seen.get(j) {
					seen.set(j)
					prev[j] = i + 1
					queue = append(queue, j)
				}
			}
		}
		if entry != noParent {
			from = entry
			for prev[from] != 0 {
				from = prev[from] - 1
			}
		}
	}
	if entry == noParent {
		return nil, true
	}
	return &leadsTo{comp: comp, from: from, entry: entry, all: all}, true
}

// lasso builds the counterexample: the breadth-first path to the p-state
// from, a path inside the subgraph to entry, then a cycle inside entry's
// component through a step of every process that is enabled throughout it.
func (e *explorer) lasso(sp liveSpec, comp []uint32, from, entry uint32, all uint64) *Result {
	c := comp[entry]
	inComp := func(i uint32) bool { return comp[i] == c }
	inSub := func(i uint32) bool { return comp[i] != noComp }
	path := e.pathTo(from)
	procs := make([]uint8, 0, len(path)+16)
	for range path[1:] {
		procs = append(procs, 0xff)
	}
	seg, segProcs := e.innerPath(from, func(i uint32) bool { return i == entry }, inSub)
	path = append(path, seg...)
	procs = append(procs, segProcs...)
	loop := len(path) - 1 // index of the step that starts the cycle
	// Witnesses: for every process, a state of C where it is disabled, or
	// an edge of C that it takes.
	cur := entry
	var disabledSomewhere uint64
	for i := uint32(0); i < e.st.n; i++ {
		if comp[i] == c {
			disabledSomewhere |= all &^ e.enabled[i]
		}
	}
	cycleLen := 0
	for p := 0; p < e.cfg.Procs(); p++ {
		if disabledSomewhere&(1<<p) != 0 {
			continue // disabled somewhere in C: visiting all of C is not needed for it
		}
		// Go to a state of C with an edge of p inside C, and take it.
		seg, sp2 := e.innerPath(cur, func(i uint32) bool {
			for k := e.off[i]; k < e.off[i+1]; k++ {
				if int(e.procs[k]) == p && comp[e.edges[k]] == c {
					return true
				}
			}
			return false
		}, inComp)
		path = append(path, seg...)
		procs = append(procs, sp2...)
		cycleLen += len(seg)
		at := cur
		if len(seg) > 0 {
			at = seg[len(seg)-1]
		}
		for k := e.off[at]; k < e.off[at+1]; k++ {
			if int(e.procs[k]) == p && comp[e.edges[k]] == c {
				path = append(path, e.edges[k])
				procs = append(procs, uint8(p))
				cur = e.edges[k]
				cycleLen++
				break
			}
		}
	}
	// Close the cycle back at entry (a stuck state has no cycle: it stutters).
	if stuck := e.off[entry] == e.off[entry+1]; !stuck {
		if cycleLen == 0 {
			// Take any edge inside C first, so the cycle is not empty.
			for k := e.off[cur]; k < e.off[cur+1]; k++ {
				if comp[e.edges[k]] == c {
					path = append(path, e.edges[k])
					procs = append(procs, e.procs[k])
					cur = e.edges[k]
					break
				}
			}
		}
		seg, sp2 := e.innerPath(cur, func(i uint32) bool { return i == entry }, inComp)
		path = append(path, seg...)
		procs = append(procs, sp2...)
	}
	cx := e.replay(path, procs)
	cx.Loop = loop
	if e.off[entry] == e.off[entry+1] {
		cx.Loop = len(cx.Steps)
	}
	r := e.res
	r.Verdict = checker.Violated
	r.Counterexample = cx
	switch sp.prop {
	case EventuallyDone:
		r.Message = "a fair run never finishes: " + stuckTasks(cx.lastState())
		if cx.Loop == len(cx.Steps) {
			r.Message = "a fair run gets stuck: " + stuckTasks(cx.lastState())
		}
	case WokenPolled:
		r.Message = fmt.Sprintf("t%d is QUEUED and a fair run never polls it", sp.task)
	case Fairness:
		r.Message = fmt.Sprintf("t%d is ready again and again but a fair run never polls it (starvation)", sp.task)
	}
	return r
}

func (cx *Counterexample) lastState() *model.State {
	if len(cx.Steps) == 0 {
		return cx.Init
	}
	for k := len(cx.Steps) - 1; k >= 0; k-- {
		if cx.Steps[k].State != nil {
			return cx.Steps[k].State
		}
	}
	return cx.Init
}

// innerPath returns a shortest path (excluding from) from `from` to a state
// satisfying goal, moving only through states satisfying inside, with 0xff
// process markers (any process whose step leads there).
func (e *explorer) innerPath(from uint32, goal, inside func(uint32) bool) ([]uint32, []uint8) {
	if goal(from) {
		return nil, nil
	}
	prev := map[uint32]uint32{from: from}
	queue := []uint32{from}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for k := e.off[i]; k < e.off[i+1]; k++ {
			j := e.edges[k]
			if _, ok := prev[j]; ok || !inside(j) {
				continue
			}
			prev[j] = i
			if goal(j) {
				var rev []uint32
				for x := j; x != from; x = prev[x] {
					rev = append(rev, x)
				}
				path := make([]uint32, len(rev))
				procs := make([]uint8, len(rev))
				for a := range rev {
					path[a] = rev[len(rev)-1-a]
					procs[a] = 0xff
				}
				return path, procs
			}
			queue = append(queue, j)
		}
	}
	return nil, nil
}

const noComp = ^uint32(0)

// tarjan numbers the strongly connected components of the subgraph of
// states satisfying in; states outside get noComp. Iterative, so deep
// graphs do not grow the goroutine stack. It gives up (ok false) when the
// exploration's context ends (an interrupt, a time budget).
func (e *explorer) tarjan(in func(uint32) bool) (_ []uint32, _ uint32, ok bool) {
	n := e.st.n
	const unvisited = ^uint32(0)
	index := make([]uint32, n)
	low := make([]uint32, n)
	comp := make([]uint32, n)
	for i := range index {
		index[i] = unvisited
		comp[i] = noComp
	}
	onStack := newBits(n)
	var stack []uint32
	type frame struct{ v, k uint32 }
	var call []frame
	var next, ncomp uint32
	steps := 0
	for root := uint32(0); root < n; root++ {
		if index[root] != unvisited || !in(root) {
			continue
		}
		call = append(call[:0], frame{root, e.off[root]})
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack.set(root)
		for len(call) > 0 {
			if steps++; steps&0xfffff == 0 && e.ctx.Err() != nil {
				return nil, 0, false
			}
			f := &call[len(call)-1]
			v := f.v
			if f.k < e.off[v+1] {
				w := e.edges[f.k]
				f.k++
				if !in(w) {
					continue
				}
				if index[w] == unvisited {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack.set(w)
					call = append(call, frame{w, e.off[w]})
				} else if onStack.get(w) && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack.clear(w)
					comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				if low[v] < low[u] {
					low[u] = low[v]
				}
			}
		}
	}
	return comp, ncomp, true
}

type bits []uint64

func newBits(n uint32) bits      { return make(bits, (n+63)/64) }
func (b bits) set(i uint32)      { b[i>>6] |= 1 << (i & 63) }
func (b bits) clear(i uint32)    { b[i>>6] &^= 1 << (i & 63) }
func (b bits) get(i uint32) bool { return b[i>>6]&(1<<(i&63)) != 0 }

// room makes room for n more elements in s, doubling its capacity when it
// grows: the graph's slices reach hundreds of megabytes, where append grows
// by a quarter at a time and so copies each element about four times.
func room[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	t := make([]T, len(s), max(2*cap(s), len(s)+n, 1024))
	copy(t, s)
	return t
}

// graphRoom makes room in the graph for n more edges and states.
func (e *explorer) graphRoom(edges, states int) {
	e.edges, e.procs = room(e.edges, edges), room(e.procs, edges)
	e.off, e.enabled = room(e.off, states), room(e.enabled, states)
}
