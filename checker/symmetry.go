package checker

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
	wperm          []int
	tmp            *model.State
}

type taskKey struct {
	id   int32
	a, b uint64
}

func newSymmetry(m *model.Model) *symmetry {
	c := m.Config()
	y := &symmetry{workers: c.Variant != model.StealOwnerEnd, tasks: true, tmp: m.Init()}
	if c.Policy == model.Priority {
		for _, p := range c.Priorities {
			if p != c.Priorities[0] {
				y.tasks = false
			}
		}
	}
	return y
}

func (y *symmetry) canon(s *model.State) {
	if y.tasks {
		y.canonTasks(s)
	}
	if y.workers {
		y.canonWorkers(s)
		if y.tasks {
			y.canonTasks(s)
		}
	}
}

func (y *symmetry) canonTasks(s *model.State) {
	n := s.Spawned // unspawned tasks are all IDLE and stay last, in order
	if n < 2 {
		return
	}
	y.key = y.key[:0]
	loc := make([]uint64, n+1) // small: n ≤ 63
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

func (y *symmetry) canonWorkers(s *model.State) {
	W := len(s.Cur)
	y.wperm = y.wperm[:0]
	for w := 0; w < W; w++ {
		y.wperm = append(y.wperm, w)
	}
	cmp := func(a, b int) int {
		if s.Cur[a] != s.Cur[b] {
			return int(s.Cur[a]) - int(s.Cur[b])
		}
		if s.Tick[a] != s.Tick[b] {
			return int(s.Tick[a]) - int(s.Tick[b])
		}
		if s.Slice[a] != s.Slice[b] {
			return int(s.Slice[a]) - int(s.Slice[b])
		}
		return slices.Compare(s.Local[a], s.Local[b])
	}
	slices.SortStableFunc(y.wperm, cmp)
	identity := true
	for w, o := range y.wperm {
		if w != o {
			identity = false
		}
	}
	if identity {
		return
	}
	t := y.tmp
	t.CopyFrom(s)
	for w, o := range y.wperm {
		s.Cur[w], s.Tick[w], s.Slice[w] = t.Cur[o], t.Tick[o], t.Slice[o]
		s.Local[w] = append(s.Local[w][:0], t.Local[o]...)
	}
}
