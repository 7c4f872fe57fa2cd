package explore

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
)

// TakeQueuedOnly names the check that a take (POLL-LOCAL, GLOBAL-STEAL,
// WORKER-STEAL) finds its task QUEUED: it fails when a task stands in a
// queue that it should not be in (a duplicate, or a task already polled).
const TakeQueuedOnly = "take-only-queued"

type explorer struct {
	ctx   context.Context
	m     *model.Model
	cfg   model.Config
	lay   *model.Layout
	opts  Options
	st    *store // the visited states; a state's id is its index in it
	sym   *symmetry
	start time.Time

	// levels[d] is the id of the first state of depth d; the last entry
	// starts the level being generated.
	levels []uint32

	// The graph, kept for liveness properties only: edges of state i are
	// edges[off[i]:off[i+1]], with the process that takes each.
	live    bool
	off     []uint32
	edges   []uint32
	procs   []uint8
	enabled []uint64 // per state: the processes with an enabled step

	invs []*model.Invariant
	// stuck: a state with nothing enabled that is not all DONE is a
	// violation (the safety property's no-stuck-state check).
	stuck bool

	transitions int64
	depth       int
	// par is the number of exploring goroutines; busy the time they spent
	// in the parallel phases.
	par   int
	busy  atomic.Int64
	phase string
	res   *Result
}

func newExplorer(ctx context.Context, m *model.Model, opts Options) (*explorer, error) {
	lay, err := m.Layout()
	if err != nil {
		return nil, err
	}
	e := &explorer{ctx: ctx, m: m, cfg: m.Config(), lay: lay, opts: opts, st: newStore(lay.Words(), lay.Bits(), opts.Compact, lay.TaskBits())}
	e.live = opts.Property != Safety
	e.stuck = opts.Property == Safety
	if opts.Invariants == nil {
		for k := range model.Invariants {
			e.invs = append(e.invs, &model.Invariants[k])
		}
	}
	for _, name := range opts.Invariants {
		inv, ok := model.InvariantByName(name)
		if !ok {
			return nil, fmt.Errorf("unknown invariant %q", name)
		}
		e.invs = append(e.invs, &inv)
	}
	if e.live && e.cfg.Procs() > 64 {
		return nil, fmt.Errorf("liveness needs at most 64 processes (1 spawner + workers + tasks); this configuration has %d", e.cfg.Procs())
	}
	if opts.Symmetry {
		if e.live {
			return nil, fmt.Errorf("symmetry reduction is for the safety property only: a permutation of workers or tasks renames the processes that weak fairness is about")
		}
		if e.cfg.Workers > maxSymWorkers {
			return nil, fmt.Errorf("symmetry reduction tries every permutation of the workers: at most %d workers", maxSymWorkers)
		}
		e.sym = newSymmetry(m, lay)
	}
	return e, nil
}

func (e *explorer) run() *Result {
	e.start = time.Now()
	e.phase = "exploring"
	e.res = &Result{Property: string(e.opts.Property), Config: e.cfg}
	var r *Result
	if !e.parallelWanted() {
		r = e.sequential()
	} else {
		r = e.parallel()
	}
	if r.Verdict == checker.Holds && e.live {
		r = e.liveness(e.opts.Property)
	}
	e.stats(r)
	return r
}

// stats fills in r's counts and times.
func (e *explorer) stats(r *Result) {
	r.States = e.count()
	r.Transitions = e.transitions
	r.Depth = e.depth
	r.Bytes = e.bytes()
	r.Elapsed = time.Since(e.start)
	r.Workers = max(e.par, 1)
	if e.par > 1 && r.Elapsed > 0 {
		r.Efficiency = float64(e.busy.Load()) / (float64(e.par) * float64(r.Elapsed))
	}
}

// parallelWanted reports whether the options ask for more than one
// exploring goroutine.
func (e *explorer) parallelWanted() bool {
	return e.opts.Parallel > 1 || (e.opts.Parallel == 0 && runtime.GOMAXPROCS(0) > 1)
}

func (e *explorer) count() int64 {
	return int64(e.st.n)
}

func (e *explorer) bytes() int64 {
	return e.st.bytes()
}

// stateOf returns the packed words of state id, in buf if the store needs
// it.
func (e *explorer) stateOf(id uint32, buf []uint64) []uint64 {
	return e.st.load(id, buf)
}

// budget reports why exploration must stop, or "".
func (e *explorer) budget(n int64) string {
	if err := e.ctx.Err(); err != nil {
		if err == context.DeadlineExceeded {
			return "time budget spent"
		}
		return "interrupted"
	}
	if e.opts.MaxStates > 0 && n >= e.opts.MaxStates {
		return fmt.Sprintf("state budget spent (%d states)", e.opts.MaxStates)
	}
	if e.opts.MaxBytes > 0 && e.bytes()+int64(len(e.edges))*5+int64(len(e.off))*12 > e.opts.MaxBytes {
		return fmt.Sprintf("memory budget spent (%d MiB)", e.opts.MaxBytes>>20)
	}
	return ""
}

func (e *explorer) progress(frontier int64) {
	if e.opts.Progress != nil {
		e.opts.Progress(Progress{Phase: e.phase, States: e.count(), Transitions: e.transitions, Depth: e.depth, Frontier: frontier, Elapsed: time.Since(e.start)})
	}
}

// root stores the initial state; it reports a violation if the initial
// state breaks an invariant.
func (e *explorer) root(buf []uint64) *Result {
	s := e.m.Init()
	if e.sym != nil {
		e.sym.canon(s)
	}
	e.lay.Pack(s, buf)
	e.st.insert(buf, hashWords(buf), noParent)
	if inv, err := e.checkInvariants(s); inv != nil {
		return e.safetyViolation(inv.Name, err.Error(), 0, nil)
	}
	return nil
}

func (e *explorer) checkInvariants(s *model.State) (*model.Invariant, error) {
	for _, inv := range e.invs {
		if err := inv.Check(e.m, s); err != nil {
			return inv, err
		}
	}
	return nil, nil
}

// sequential explores breadth first on one goroutine, keeping the graph
// when a liveness property needs it.
func (e *explorer) sequential() *Result {
	buf := make([]uint64, e.lay.Words())
	if r := e.root(buf); r != nil {
		return r
	}
	cur, next := e.m.Init(), e.m.Init()
	sbuf := make([]uint64, e.lay.Words())
	levelEnd := uint32(1)
	e.levels = append(e.levels[:0], 0, 1)
	lastReport := time.Now()
	var bad *Result
	for i := uint32(0); i < e.st.n; i++ {
		if i == levelEnd {
			e.depth++
			levelEnd = e.st.n
			e.levels = append(e.levels, levelEnd)
		}
		if i&1023 == 0 {
			if why := e.budget(e.count()); why != "" {
				e.res.Verdict, e.res.Message = checker.Unknown, why
				return e.res
			}
			if time.Since(lastReport) >= time.Second {
				lastReport = time.Now()
				e.progress(int64(e.st.n - i))
			}
		}
		e.lay.Unpack(e.st.load(i, sbuf), cur)
		if e.live && i&1023 == 0 {
			e.graphRoom(64<<10, 1024) // appends below never copy the graph
		}
		var mask uint64
		count, start := 0, len(e.edges)
		e.m.Next(cur, next, func(step model.Step, nx *model.State, err error) bool {
			count++
			e.transitions++
			if err != nil {
				bad = e.safetyViolation(TakeQueuedOnly, err.Error(), i, &step)
				return false
			}
			if e.sym != nil {
				e.sym.canon(nx)
			}
			if !e.lay.Pack(nx, buf) {
				bad = e.safetyViolation(model.Invariants[1].Name, "a queue grew longer than any correct run allows", i, &step)
				return false
			}
			j, isNew := e.st.insert(buf, hashWords(buf), i)
			if e.live {
				p := step.Proc(e.cfg.Workers)
				e.edges = append(e.edges, j)
				e.procs = append(e.procs, uint8(p))
				mask |= 1 << p
			}
			if isNew {
				if inv, err := e.checkInvariants(nx); inv != nil {
					bad = e.safetyViolation(inv.Name, err.Error(), j, nil)
					return false
				}
			}
			return true
		})
		if bad != nil {
			return bad
		}
		if e.live {
			e.off = append(e.off, uint32(start))
			e.enabled = append(e.enabled, mask)
		}
		if count == 0 && !cur.AllDone() && e.stuck {
			return e.safetyViolation(model.NoStuckState, "no rule is enabled but not every task is DONE: "+stuckTasks(cur), i, nil)
		}
	}
	if e.live {
		e.off = append(e.off, uint32(len(e.edges)))
	}
	e.res.Verdict = checker.Holds
	return e.res
}

func stuckTasks(s *model.State) string {
	out := ""
	for i, st := range s.Task {
		if st != model.Done {
			if out != "" {
				out += ", "
			}
			out += fmt.Sprintf("t%d %s", i+1, st)
		}
	}
	return out
}

// safetyViolation builds the result for a property that fails in state
// idx, or, with step set, when step is taken from state idx.
func (e *explorer) safetyViolation(prop, msg string, idx uint32, step *model.Step) *Result {
	r := e.res
	r.Verdict = checker.Violated
	r.Property = prop
	r.Message = msg
	path := e.pathTo(idx)
	cx := e.replay(path, nil)
	if step != nil {
		cx.Steps = append(cx.Steps, CexStep{Step: *step})
	}
	cx.Loop = -1
	r.Counterexample = cx
	return r
}

// pathTo returns the state indices from the initial state to idx.
func (e *explorer) pathTo(idx uint32) []uint32 {
	var rev []uint32
	if !e.st.hasParents() {
		rev = e.searchPath(idx)
	}
	for i := idx; i != noParent && e.st.hasParents(); i = e.st.parentOf(i) {
		rev = append(rev, i)
	}
	for a, b := 0, len(rev)-1; a < b; a, b = a+1, b-1 {
		rev[a], rev[b] = rev[b], rev[a]
	}
	return rev
}

// replay turns a path of state indices into steps, starting from the
// initial state. With symmetry the stored states are representatives, so
// replay follows real states and matches each one's successors up to
// symmetry. procs, if set, gives the process each step must be taken by
// (0xff for any).
func (e *explorer) replay(path []uint32, procs []uint8) *Counterexample {
	cur := e.m.Init()
	cx := &Counterexample{Init: cur.Clone()}
	buf := make([]uint64, e.lay.Words())
	wbuf := make([]uint64, e.lay.Words())
	canon := e.m.Init()
	for k := 1; k < len(path); k++ {
		want := e.stateOf(path[k], wbuf)
		var found *CexStep
		e.m.Next(cur, e.m.Init(), func(step model.Step, nx *model.State, err error) bool {
			if err != nil {
				return true
			}
			if procs != nil && procs[k-1] != 0xff && step.Proc(e.cfg.Workers) != int(procs[k-1]) {
				return true
			}
			c := nx
			if e.sym != nil {
				canon.CopyFrom(nx)
				e.sym.canon(canon)
				c = canon
			}
			e.lay.Pack(c, buf)
			if equalWords(buf, want) {
				found = &CexStep{Step: step, State: nx.Clone()}
				return false
			}
			return true
		})
		if found == nil {
			// Cannot happen while the successor function and the stored
			// states agree; if it does, keep the steps found so far and
			// say so, rather than fail the whole run.
			cx.Incomplete = fmt.Sprintf("the counterexample could not be rebuilt past step %d", k)
			break
		}
		cx.Steps = append(cx.Steps, *found)
		cur = found.State
	}
	return cx
}
