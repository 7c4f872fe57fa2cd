package broken

import "github.com/execspec/execspec/executor"

// TwoDefects returns broken executors with two independent bugs each, to
// show that the suite reports both in one run, the second not hidden behind
// the first: a wake of a QUEUED task pushes it again (a duplicate enqueue),
// and tasks are taken by priority alone (starvation).
func TwoDefects() []Executor {
	return []Executor{
		{"double-enqueue+priority-no-aging", "a wake of a QUEUED task pushes it again; tasks are taken by priority alone", "queue w=1 priority",
			func() executor.Executor {
				return newQueue(QueueConfig{Workers: 1, Priority: true}, bugDoubleEnqueue|bugPriorityNoAging)
			}},
	}
}
