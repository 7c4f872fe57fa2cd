package explore

import (
	"slices"

	"github.com/execspec/execspec/model"
)

// symmetry maps a state to a representative of its class under the
// permutations of interchangeable workers and of tasks with identical
// programs. Any map into the class is sound (each stored state stands for
// states the model can really reach, with the same verdicts); the closer it
// is to canonical the more it saves. Tasks are ordered by their own fields
// and their place (which worker polls them, which queue and position holds
// them); tasks that tie are interchangeable, so for a fixed worker order the
// task order is canonical. Workers are ordered by what they hold.
//
// A symmetry is not safe for concurrent use: it keeps scratch space.
type symmetry struct {
	tasks, workers bool
	key            []taskKey
	perm           []int32 // old task id → new task id
	loc            []uint64
	lay            *model.Layout
	wperms         [][]int // every permutation of the workers
	tmp, try, best *model.State
	buf, bestBuf   []uint64
}

type taskKey struct {
	id   int32
	a, b uint64
}

// maxSymWorkers bounds the workers whose permutations are tried (5! = 120).
const maxSymWorkers = 5

func newSymmetry(m *model.Model, lay *model.Layout) *symmetry {
	c := m.Config()
	y := &symmetry{workers: c.Variant != model.StealOwnerEnd && c.Workers > 1, tasks: true,
		tmp: m.Init(), try: m.Init(), best: m.Init(), lay: lay,
		buf: make([]uint64, lay.Words()), bestBuf: make([]uint64, lay.Words())}
	if y.workers {
		y.wperms = permutations(c.Workers)
	}
	if c.Policy == model.Priority {
		for _, p := range c.Priorities {
			if p != c.Priorities[0] {
				y.tasks = false
			}
		}
	}
	return y
}

// canon replaces s by the representative of its class: for every
// permutation of the workers, the canonical task order; of those, the one
// whose packed form is least. Task order is canonical for a fixed worker
// order (see above), so the result is canonical: every state of a class maps
// to the same one, which a counterexample's replay relies on.
func (y *symmetry) canon(s *model.State) {
	if !y.workers {
		if y.tasks {
			y.canonTasks(s)
		}
		return
	}
	first := true
	for _, p := range y.wperms {
		y.try.CopyFrom(s)
		permuteWorkers(y.try, s, p)
		if y.tasks {
			y.canonTasks(y.try)
		}
		y.lay.Pack(y.try, y.buf)
		if first || lessWords(y.buf, y.bestBuf) {
			first = false
			copy(y.bestBuf, y.buf)
			y.best.CopyFrom(y.try)
		}
	}
	s.CopyFrom(y.best)
}

func lessWords(a, b []uint64) bool {
	for i := len(a) - 1; i >= 0; i-- {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// permuteWorkers sets dst's worker fields to src's, worker p[w] becoming w.
func permuteWorkers(dst, src *model.State, p []int) {
	for w, o := range p {
		dst.Cur[w], dst.Tick[w], dst.Slice[w] = src.Cur[o], src.Tick[o], src.Slice[o]
		dst.Local[w] = append(dst.Local[w][:0], src.Local[o]...)
	}
}

func permutations(n int) [][]int {
	var out [][]int
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var gen func(k int)
	gen = func(k int) {
		if k == n {
			out = append(out, append([]int(nil), p...))
			return
		}
		for i := k; i < n; i++ {
			p[k], p[i] = p[i], p[k]
			gen(k + 1)
			p[k], p[i] = p[i], p[k]
		}
	}
	gen(0)
	return out
}

func (y *symmetry) canonTasks(s *model.State) {
	n := s.Spawned // unspawned tasks are all IDLE and stay last, in order
	if n < 2 {
		return
	}
	y.key = y.key[:0]
	y.loc = append(y.loc[:0], make([]uint64, n+1)...)
	loc := y.loc
	for w, t := range s.Cur {
		if t != 0 && loc[t] == 0 {
			loc[t] = 1<<40 | uint64(w)
		}
	}
	for k, t := range s.Global {
		if loc[t] == 0 {
			loc[t] = 2<<40 | uint64(k)
		}
	}
	for w, q := range s.Local {
		for k, t := range q {
			if loc[t] == 0 {
				loc[t] = 3<<40 | uint64(w)<<16 | uint64(k)
			}
		}
	}
	for i := 0; i < n; i++ {
		a := uint64(s.Task[i])<<56 | uint64(s.Pend[i])<<48 | uint64(s.Wakes[i])<<40 | uint64(s.Age[i])<<32 | uint64(s.Tries[i])<<24
		if s.Polled[i] {
			a |= 1
		}
		y.key = append(y.key, taskKey{id: int32(i + 1), a: a, b: loc[i+1]})
	}
	slices.SortStableFunc(y.key, func(x, z taskKey) int {
		if x.a != z.a {
			if x.a < z.a {
				return -1
			}
			return 1
		}
		if x.b != z.b {
			if x.b < z.b {
				return -1
			}
			return 1
		}
		return 0
	})
	y.perm = append(y.perm[:0], make([]int32, len(s.Task)+1)...)
	identity := true
	for k, key := range y.key {
		y.perm[key.id] = int32(k + 1)
		if key.id != int32(k+1) {
			identity = false
		}
	}
	if identity {
		return
	}
	for t := n + 1; t <= len(s.Task); t++ {
		y.perm[t] = int32(t)
	}
	t := y.tmp
	t.CopyFrom(s)
	for old := 1; old <= n; old++ {
		i, j := old-1, int(y.perm[old])-1
		s.Task[j], s.Pend[j], s.Wakes[j], s.Polled[j], s.Age[j], s.Tries[j] =
			t.Task[i], t.Pend[i], t.Wakes[i], t.Polled[i], t.Age[i], t.Tries[i]
	}
	ren := func(q []int32) {
		for k, id := range q {
			if id != 0 {
				q[k] = y.perm[id]
			}
		}
	}
	ren(s.Cur)
	ren(s.Steal)
	ren(s.Global)
	for _, q := range s.Local {
		ren(q)
	}
}
