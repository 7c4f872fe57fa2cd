package model_test

import (
	"fmt"

	"github.com/execspec/execspec/model"
)

func Example() {
	m, _ := model.New(model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1})
	s := m.Init()
	_ = m.Apply(s, model.Step{Rule: model.SPAWN, Task: 1, Worker: -1, Victim: -1, Dest: model.Global})
	err := m.Apply(s, model.Step{Rule: model.WORKER_STEAL, Task: 1, Worker: 0, Victim: 1})
	fmt.Println(err)
	fmt.Println(s)
	// Output:
	// WORKER-STEAL: premise global = ∅ fails: the global queue holds [t1]
	// global [t1]
	// w0 idle  local []
	// w1 idle  local []
	// tasks t1:QUEUED (2 not spawned)
}
