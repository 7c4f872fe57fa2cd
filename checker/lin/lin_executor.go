package lin

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
	"github.com/execspec/execspec/traces"
)

// The whole-executor specification: every task's lifecycle and every queue
// in one state, each operation stepping its task (linTaskStep) and the
// queues it touched (linQueueStep) at once. It catches what the partitions
// cannot see together, such as a take that is legal for the task and for
// the queue separately but of a task that another queue held. Its search is
// exponential in the history, so it runs on small histories only.

type linWholeState struct {
	tasks  []linTaskState  // by compact task index
	queues []linQueueState // 0 = global, w+1 = local(w)
}

type linWholeIn struct {
	op    linTaskIn
	index int // compact task index
	pushQ int // queue index + 1; 0 = none
	takeQ int
	take  QueueOpKind
	push  QueueOpKind
	moved []int64 // a steal-half: removed from takeQ with the task, pushed onto thief
	thief int     // queue index + 1 of the thief's deque
}

func linQueueIndex(q traces.Queue) int {
	if q == traces.QueueGlobal {
		return 0
	}
	return int(q)
}

func linWholeModel(pol linPolicy, ntasks, nqueues int) porcupine.Model {
	return porcupine.Model{
		Init: func() any {
			return linWholeState{tasks: make([]linTaskState, ntasks), queues: make([]linQueueState, nqueues)}
		},
		Step: func(st, in, _ any) (bool, any) {
			s := st.(linWholeState)
			x := in.(linWholeIn)
			ok, ts := linTaskStep(pol, s.tasks[x.index], x.op)
			if !ok {
				return false, s
			}
			n := linWholeState{tasks: slices.Clone(s.tasks), queues: slices.Clone(s.queues)}
			n.tasks[x.index] = ts
			if x.takeQ > 0 {
				q := x.takeQ - 1
				ok, nq := linQueueStep(n.queues[q], linQueueIn{kind: x.take, value: x.op.task, moved: x.moved}, nil)
				if !ok {
					return false, s
				}
				n.queues[q] = nq.(linQueueState)
				if len(x.moved) > 0 {
					// The moved tasks, in the victim's order, onto the thief's tail.
					old := s.queues[q].q
					th := n.queues[x.thief-1]
					tq := slices.Clone(th.q)
					tq = append(tq, old[1:1+len(x.moved)]...)
					n.queues[x.thief-1] = linQueueState{q: tq, slot: th.slot}
				}
			}
			if x.pushQ > 0 {
				q := x.pushQ - 1
				_, nq := linQueueStep(n.queues[q], linQueueIn{kind: x.push, value: x.op.task}, nil)
				n.queues[q] = nq.(linQueueState)
			}
			if x.op.kind == linEnd {
				for _, q := range n.queues {
					if !q.empty() {
						return false, s
					}
				}
			}
			return true, n
		},
		Equal: func(a, b any) bool {
			x, y := a.(linWholeState), b.(linWholeState)
			if !slices.Equal(x.tasks, y.tasks) {
				return false
			}
			for i := range x.queues {
				if !x.queues[i].equal(y.queues[i]) {
					return false
				}
			}
			return true
		},
		Hash: func(a any) uint64 {
			x := a.(linWholeState)
			h := fnv.New64a()
			for _, t := range x.tasks {
				fmt.Fprint(h, t.st, t.worker, t.tries, t.slice, t.begun, ";")
			}
			for _, q := range x.queues {
				fmt.Fprint(h, q.q, q.slot, "|")
			}
			return h.Sum64()
		},
		DescribeOperation: func(in, _ any) string { return in.(linWholeIn).op.String() },
		DescribeState: func(a any) string {
			x := a.(linWholeState)
			var b strings.Builder
			for i, q := range x.queues {
				if i == 0 {
					fmt.Fprintf(&b, "global %v", q.q)
				} else {
					fmt.Fprintf(&b, " local[%d] %v", i-1, q.q)
				}
				if q.slot != 0 {
					fmt.Fprintf(&b, " slot %d", q.slot)
				}
			}
			return b.String()
		},
	}
}

// linWholeOps turns the history into whole-executor operations.
func linWholeOps(hist *linHistory, complete bool) (ops []porcupine.Operation, ntasks, nqueues int) {
	index := map[int64]int{}
	nqueues = hist.workers + 1
	for _, o := range hist.ops {
		if _, ok := index[o.task.task]; !ok {
			index[o.task.task] = len(index)
		}
		for _, q := range []traces.Queue{o.pushQ, o.takeQ} {
			if q != traces.QueueNone && linQueueIndex(q)+1 > nqueues {
				nqueues = linQueueIndex(q) + 1
			}
		}
	}
	for _, o := range hist.ops {
		x := linWholeIn{op: o.task, index: index[o.task.task], take: o.takeKind, push: o.pushKind, moved: o.moved}
		if len(o.moved) > 0 {
			x.thief = linQueueIndex(traces.LocalQueue(int(o.task.worker))) + 1
		}
		if o.pushQ != traces.QueueNone {
			x.pushQ = linQueueIndex(o.pushQ) + 1
		}
		if o.takeQ != traces.QueueNone {
			x.takeQ = linQueueIndex(o.takeQ) + 1
		}
		ops = append(ops, porcupine.Operation{ClientId: o.client, Input: x, Call: o.call, Return: o.ret, Metadata: o.event})
	}
	if complete && len(hist.ops) > 0 {
		// One end operation per task; the last one also sees the queues
		// empty (the check runs on every end, so every end sees them).
		for t, i := range index {
			ops = append(ops, porcupine.Operation{
				Input: linWholeIn{op: linTaskIn{kind: linEnd, task: t}, index: i},
				Call:  hist.maxTick + 1, Return: linInf, Metadata: -1,
			})
		}
	}
	return ops, len(index), nqueues
}
