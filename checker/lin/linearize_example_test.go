package lin_test

import (
	"fmt"

	"github.com/execspec/execspec/checker/lin"
	"github.com/execspec/execspec/traces"
)

// Two tasks pushed on the FIFO global queue one after the other, then taken
// in the opposite order by two workers whose takes do not overlap: no order
// of the operations is a legal run of a FIFO queue.
func ExampleCheck() {
	h := traces.Header{Workers: 2, Policy: "fifo"}
	events := []traces.Event{
		{Seq: 2, Call: 1, Return: 2, Kind: traces.KindSpawn, Task: 1, Worker: -1, Queue: traces.QueueGlobal},
		{Seq: 4, Call: 3, Return: 4, Kind: traces.KindSpawn, Task: 2, Worker: -1, Queue: traces.QueueGlobal},
		{Seq: 6, Call: 5, Return: 6, Kind: traces.KindTake, Task: 2, Worker: 1, Source: traces.SourceGlobal},
		{Seq: 8, Call: 7, Return: 8, Kind: traces.KindTake, Task: 1, Worker: 0, Source: traces.SourceGlobal},
	}
	res, err := lin.Check(h, events, lin.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Verdict)
	for _, c := range res.Checks {
		fmt.Println(c.Spec, c.Verdict)
	}
	// Output:
	// violated
	// task holds
	// global violated
	// executor violated
}

// A deque history checked on its own: the owner pushes 1 and 2 and pops 2
// from its end; a thief then steals 1 from the other end. Legal.
func ExampleCheckQueue() {
	ops := []lin.QueueOp{
		{Client: 0, Kind: lin.Push, Value: 1, Call: 1, Return: 2},
		{Client: 0, Kind: lin.Push, Value: 2, Call: 3, Return: 4},
		{Client: 0, Kind: lin.TakeTail, Value: 2, Call: 5, Return: 6},
		{Client: 1, Kind: lin.TakeHead, Value: 1, Call: 5, Return: 7},
	}
	c, err := lin.CheckQueue("deque", ops, lin.Options{Complete: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Verdict)
	// Output: holds
}
