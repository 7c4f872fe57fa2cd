package explore_test

import (
	"context"
	"fmt"

	"github.com/execspec/execspec/checker/explore"
	"github.com/execspec/execspec/model"
)

// A wake that arrives during a poll must not be lost: the lost-wakeup
// variant of the rules drops it, and the model checker finds the shortest
// run that shows it.
func ExampleExplore() {
	c := model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1, Variant: model.LostWakeup}
	r, err := explore.Explore(context.Background(), c, explore.Options{Parallel: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Verdict, r.Property+":", r.Message)
	for i, s := range r.Counterexample.Steps {
		fmt.Printf("%d %s\n", i+1, s.Step)
	}
	// Output:
	// violated no-lost-wakeup: t1 is WAITING and no wake will come: a wake was lost
	// 1 SPAWN t1 onto global
	// 2 GLOBAL-STEAL w0 takes t1
	// 3 POLL-PENDING w0: t1 registers its waker
	// 4 WAKE t1 (to global)
	// 5 WAKE t1 (to global)
	// 6 TASK-SUSPEND w0: t1 returns Pending
}
