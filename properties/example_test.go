package properties_test

import (
	"fmt"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
)

// Check runs the suite outside a test; here on a broken executor whose
// wakes of a queued task push it again. Under the controller the failing
// case is found, shrunk and named deterministically, led by its root cause:
// the trace's first departure from the model (the second push), before
// the poll after Ready it leads to.
func ExampleCheck() {
	var doubleEnqueue broken.Executor
	for _, b := range broken.Catalogue() {
		if b.Name == "double-enqueue" {
			doubleEnqueue = b
		}
	}
	rep := properties.Check(doubleEnqueue.New, properties.Config{Checks: 50, StopAtFirst: true, Seed: 1})
	fmt.Println(rep.Verdict())
	for _, r := range rep.Results {
		if r.Err() != nil {
			fmt.Println(r.Err())
		}
	}
	// Output:
	// violated
	// exactly-once: conformance (model conformance): the executor's trace does not conform to the model
}

// Properties lists the suite: each property's name and the rule or
// contract it protects.
func ExampleProperties() {
	for _, p := range properties.Properties()[:4] {
		fmt.Println(p)
	}
	// Output:
	// exactly-once (TASK-COMPLETE)
	// no-concurrent-poll (POLL-LOCAL)
	// no-poll-after-ready (TASK-COMPLETE)
	// fairness (fairness)
}

// A user's test runs every property on their executor:
//
//	func TestMyExecutor(t *testing.T) {
//		properties.Run(t, func() executor.Executor { return myexec.New(4) })
//	}
func ExampleRun() {
	newExecutor, _ := executor.Builtin("fifo")
	_ = newExecutor // properties.Run(t, newExecutor) in a test
}

// Run and Check return a Report: per property its verdict, cases, time,
// failure and figures (Report.String prints them all). Here the built-in
// FIFO executor: what held, on how many cases, and whether fairness
// figures were measured.
func ExampleReport() {
	newExecutor, _ := executor.Builtin("fifo")
	rep := properties.Check(newExecutor, properties.Config{Checks: 20, Only: []string{"fairness", "waker-idempotence"}})
	for _, r := range rep.Results {
		fmt.Println(r.Property.Name, r.Verdict, r.Cases, r.Figures.Fairness != "")
	}
	fmt.Println(rep.Verdict())
	// Output:
	// fairness holds 20 true
	// waker-idempotence holds 20 false
	// holds
}
