package lin

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/execspec/execspec/model"
)

// The queue specification agrees with the model's queues: on random runs of
// the closed model (work stealing, owner LIFO and FIFO, steal one and steal
// half), every step's effect on each queue is the one the queue spec gives
// for the operation the step is — a push at the tail of the queue that
// grew, a take from the owner end for POLL-LOCAL, from the head for
// GLOBAL-STEAL and WORKER-STEAL (with the moved tasks for steal-half).
func TestLinQueueSpecMatchesModel(t *testing.T) {
	for _, c := range []model.Config{
		{Workers: 3, Tasks: 6, Pendings: 2, LocalCap: 3},
		{Workers: 3, Tasks: 6, Pendings: 2, LocalCap: 3, OwnerFIFO: true},
		{Workers: 2, Tasks: 12, Pendings: 3, LocalCap: 8, StealHalf: true},
		{Policy: model.FIFO, Workers: 2, Tasks: 5, Pendings: 2},
	} {
		m, err := model.New(c)
		if err != nil {
			t.Fatal(err)
		}
		cfg := m.Config()
		ownerKind := TakeTail
		if cfg.OwnerFIFO {
			ownerKind = TakeHead
		}
		r := rand.New(rand.NewPCG(1, 2))
		steps := 0
		seen := map[string]int{}
		for run := range 50 {
			s := m.Init()
			next := m.Init()
			for {
				type succ struct {
					st model.Step
					s  *model.State
				}
				var succs []succ
				m.Next(s, next, func(st model.Step, n *model.State, err error) bool {
					if err != nil {
						t.Fatalf("%v: %v", cfg, err)
					}
					succs = append(succs, succ{st, n.Clone()})
					return true
				})
				if len(succs) == 0 {
					break
				}
				x := succs[r.IntN(len(succs))]
				linCheckQueueStep(t, cfg, ownerKind, s, x.st, x.s)
				seen[x.st.Rule.String()]++
				if x.st.Rule == model.WORKER_STEAL && len(x.s.Local[x.st.Worker]) > 0 {
					seen["moved"]++
				}
				s = x.s
				steps++
			}
			_ = run
		}
		t.Logf("%v: %d steps %v", cfg.Policy, steps, seen)
		if cfg.Policy == model.WorkSteal && (seen["POLL-LOCAL"] == 0 || seen["WORKER-STEAL"] == 0 || cfg.StealHalf && seen["moved"] == 0) {
			t.Fatalf("the runs missed a rule: %v", seen)
		}
	}
}

// linCheckQueueStep applies to each queue of before the queue operation
// that step st is, by the queue spec, and compares with after.
func linCheckQueueStep(t *testing.T, cfg model.Config, ownerKind QueueOpKind, before *model.State, st model.Step, after *model.State) {
	t.Helper()
	conv := func(q []int32) linQueueState {
		out := make([]int64, len(q))
		for i, v := range q {
			out[i] = int64(v)
		}
		return linQueueState{q: out}
	}
	// Queue 0 is global, w+1 is local(w).
	n := 1 + len(before.Local)
	get := func(s *model.State, i int) []int32 {
		if i == 0 {
			return s.Global
		}
		return s.Local[i-1]
	}
	spec := make([]linQueueState, n)
	for i := range spec {
		spec[i] = conv(get(before, i))
	}
	apply := func(i int, in linQueueIn) {
		ok, next := linQueueStep(spec[i], in, nil)
		if !ok {
			t.Fatalf("%s: the queue spec refuses %s on %v", st, in.kind, spec[i].q)
		}
		spec[i] = next.(linQueueState)
	}
	task := int64(st.Task)
	switch st.Rule {
	case model.POLL_LOCAL:
		apply(1+st.Worker, linQueueIn{kind: ownerKind, value: task})
	case model.GLOBAL_STEAL:
		apply(0, linQueueIn{kind: TakeHead, value: task})
	case model.WORKER_STEAL:
		moved := conv(after.Local[st.Worker]).q // the thief's deque was empty
		apply(1+st.Victim, linQueueIn{kind: TakeHead, value: task, moved: moved})
		for _, v := range moved {
			apply(1+st.Worker, linQueueIn{kind: Push, value: v})
		}
	default:
		// A push, if a queue grew: onto its tail.
		for i := range n {
			if len(get(after, i)) > len(get(before, i)) {
				apply(i, linQueueIn{kind: Push, value: task})
			}
		}
	}
	for i := range n {
		if !slices.Equal(spec[i].q, conv(get(after, i)).q) {
			t.Fatalf("%s: queue %d is %v in the model, %v by the queue spec", st, i, get(after, i), spec[i].q)
		}
	}
}
