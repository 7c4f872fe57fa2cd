package conform_test

import (
	"fmt"
	"strings"

	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/traces"
)

// A trace in which a worker steals although its own local queue holds a
// task: the checker names the event, the rule, the premise that failed and
// the model state.
func ExampleConformance() {
	h, events, err := traces.ParseText(strings.NewReader(`
execspec-trace v1 executor=demo workers=2 policy=worksteal local-cap=4
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w0 spawn t3 -> local:0
#6 w0 poll-end t1 ready
#7 w1 take t2 steal from w0
#8 w1 poll-begin t2
#9 w1 spawn t4 -> local:1
#10 w1 poll-end t2 ready
#11 w1 take t3 steal from w0
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := conform.New(h)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range events {
		if err := c.Step(e); err != nil {
			fmt.Println(err)
			fmt.Println(c.Lanes())
			break
		}
	}
	r := c.Finish()
	fmt.Println(r.Verdict)
	// Output:
	// event 11 (seq 11): WORKER-STEAL by worker 1 of task 3 from worker 0, but w1's local queue holds [t4] (premise local(w) = ∅ fails)
	// global []
	// w0 idle  local [t3]
	// w1 idle  local [t4]
	// tasks t1:DONE t2:DONE t3:QUEUED t4:QUEUED
	// violated
}

// Check reads a whole trace and reports what only the whole trace
// shows: tasks woken and never polled again, tasks never completed, and the
// fairness figures.
func ExampleCheck() {
	h, events, _ := traces.ParseText(strings.NewReader(`
execspec-trace v1 executor=demo workers=1 policy=fifo
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 w0 take t1 global
#4 w0 poll-begin t1
#5 w0 poll-end t1 pending
#6 out wake t1 scheduled -> global
#7 w0 take t2 global
#8 w0 poll-begin t2
#9 w0 poll-end t2 ready
`))
	r, err := conform.Check(h, traces.All(events))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Summary())
	// Output:
	// every event conforms, but 1 of 2 tasks are not DONE at the end
	// lost wakeups (woken, never polled again, not DONE): t1
	// never completed: t1
	// fairness: at most 1 polls of other tasks between ready and poll (t2); largest delay 5 ticks (t2)
}
