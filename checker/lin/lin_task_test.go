package lin

import (
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

// Hand-written histories of one task, each a single rule kept or broken.
// Events carry only Seq: each is an instant, so the order is fixed.
func TestLinTaskLifecycle(t *testing.T) {
	spawn := traces.Event{Kind: traces.KindSpawn, Task: 1, Worker: -1, Queue: traces.QueueGlobal}
	take := func(w int32) traces.Event {
		return traces.Event{Kind: traces.KindTake, Task: 1, Worker: w, Source: traces.SourceGlobal, Victim: -1}
	}
	begin := func(w int32) traces.Event { return traces.Event{Kind: traces.KindPollBegin, Task: 1, Worker: w} }
	end := func(w int32, r traces.Result) traces.Event {
		return traces.Event{Kind: traces.KindPollEnd, Task: 1, Worker: w, Result: r}
	}
	wake := func(o traces.Outcome) traces.Event {
		return traces.Event{Kind: traces.KindWake, Task: 1, Worker: -1, Outcome: o, Queue: traces.QueueGlobal}
	}
	requeue := func(w int32) traces.Event {
		return traces.Event{Kind: traces.KindRequeue, Task: 1, Worker: w, Queue: traces.QueueGlobal}
	}
	P, R, X := traces.ResultPending, traces.ResultReady, traces.ResultPanic
	cases := []struct {
		name   string
		policy string
		config map[string]int
		events []traces.Event
		want   checker.Verdict
	}{
		{"run to completion", "fifo", nil, []traces.Event{spawn, take(0), begin(0), end(0, R)}, checker.Holds},
		{"pending, woken, polled again", "fifo", nil, []traces.Event{spawn, take(0), begin(0), end(0, P), wake(traces.OutcomeScheduled), take(1), begin(1), end(1, R)}, checker.Holds},
		{"woken during the poll: re-queued", "fifo", nil, []traces.Event{spawn, take(0), begin(0), wake(traces.OutcomeNotified), end(0, P), requeue(0), take(0), begin(0), end(0, R)}, checker.Holds},
		{"wakes coalesce, late wake ignored", "fifo", nil, []traces.Event{spawn, wake(traces.OutcomeCoalesced), take(0), begin(0), end(0, R), wake(traces.OutcomeLate)}, checker.Holds},
		{"lost wakeup: notified, not re-queued", "fifo", nil, []traces.Event{spawn, take(0), begin(0), wake(traces.OutcomeNotified), end(0, P), {Kind: traces.KindPark, Worker: 0}}, checker.Violated},
		{"cut after the poll end: the re-queue may follow", "fifo", nil, []traces.Event{spawn, take(0), begin(0), wake(traces.OutcomeNotified), end(0, P)}, checker.Holds},
		{"re-queued without a wake", "fifo", nil, []traces.Event{spawn, take(0), begin(0), end(0, P), requeue(0)}, checker.Violated},
		{"polled after Ready", "fifo", nil, []traces.Event{spawn, take(0), begin(0), end(0, R), begin(0)}, checker.Violated},
		{"taken after Ready", "fifo", nil, []traces.Event{spawn, take(0), begin(0), end(0, R), take(1)}, checker.Violated},
		{"two polls at once", "fifo", nil, []traces.Event{spawn, take(0), begin(0), begin(1)}, checker.Violated},
		{"poll end by another worker", "fifo", nil, []traces.Event{spawn, take(0), begin(0), end(1, R)}, checker.Violated},
		{"wake outcome wrong: scheduled while running", "fifo", nil, []traces.Event{spawn, take(0), wake(traces.OutcomeScheduled)}, checker.Violated},
		{"wake enqueues twice", "fifo", nil, []traces.Event{spawn, take(0), begin(0), end(0, P), wake(traces.OutcomeScheduled), wake(traces.OutcomeScheduled)}, checker.Violated},
		{"wake before spawn", "fifo", nil, []traces.Event{wake(traces.OutcomeScheduled), spawn}, checker.Violated},
		{"retry: a failed task re-run", "retry", map[string]int{"retries": 1}, []traces.Event{spawn, take(0), begin(0), end(0, X), requeue(0), take(0), begin(0), end(0, R)}, checker.Holds},
		{"retry: a task with fewer retries fails for good", "retry", map[string]int{"retries": 2}, []traces.Event{spawn, take(0), begin(0), end(0, X)}, checker.Holds},
		{"retry: re-run past its retries", "retry", map[string]int{"retries": 1}, []traces.Event{spawn, take(0), begin(0), end(0, X), requeue(0), take(0), begin(0), end(0, X), requeue(0)}, checker.Violated},
		{"no retry policy: a failed task is DONE", "fifo", nil, []traces.Event{spawn, take(0), begin(0), end(0, X), requeue(0)}, checker.Violated},
		{"time slice: woken, re-polled at once", "timeslice", map[string]int{"slice": 1}, []traces.Event{spawn, take(0), begin(0), wake(traces.OutcomeNotified), end(0, P), begin(0), end(0, R)}, checker.Holds},
		{"time slice: second re-poll past the slice", "timeslice", map[string]int{"slice": 1}, []traces.Event{spawn, take(0), begin(0), wake(traces.OutcomeNotified), end(0, P), begin(0), wake(traces.OutcomeNotified), end(0, P), begin(0)}, checker.Violated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := make([]traces.Event, len(c.events))
			for i, e := range c.events {
				e.Seq = uint64(i + 1)
				ev[i] = e
			}
			h := traces.Header{Workers: 2, Policy: c.policy, Config: c.config}
			res, err := Check(h, ev, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var task SpecCheck
			for _, ch := range res.Checks {
				if ch.Spec == "task" {
					task = ch
				}
			}
			if task.Verdict != c.want {
				t.Fatalf("task lifecycle: %s, want %s\n%s", task.Verdict, c.want, res.Summary())
			}
		})
	}
}

// The budget is honoured: a history too hard for it is Unknown, never
// Holds.
func TestLinBudgetUnknown(t *testing.T) {
	ops := linFIFOHistory(400, 8, true, 1)
	// An operation that never returned: the polynomial FIFO decision does
	// not apply, so porcupine must search.
	ops[len(ops)-1].Return = 0
	c, err := CheckQueue("global", ops, Options{MaxWindow: -1, Budget: 200 * 1e6})
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != checker.Unknown {
		t.Fatalf("%s, want unknown: %s", c.Verdict, c.Detail)
	}
	// Past MaxWindow, with no budget for long windows, such a window is
	// not searched at all: Unknown at once.
	c, err = CheckQueue("global", ops, Options{MaxWindow: 100, LongBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != checker.Unknown || c.Skipped != 1 {
		t.Fatalf("%s (%d skipped), want unknown", c.Verdict, c.Skipped)
	}
}

// Steal-half, followed over two hops: worker 1 steals task 1 from worker 0
// with 2, 3 and 4; worker 2 steals 2 from worker 1 with 3. Nothing records
// the moves; they are inferred from where 3 and 4 are taken.
func TestLinStealHalfTwoHops(t *testing.T) {
	var ev []traces.Event
	add := func(e traces.Event) {
		e.Seq = uint64(len(ev) + 1)
		if e.Kind != traces.KindTake || e.Source != traces.SourceSteal {
			e.Victim = -1
		}
		ev = append(ev, e)
	}
	run := func(task int64, w int32, src traces.Source, victim int32) {
		add(traces.Event{Kind: traces.KindTake, Task: task, Worker: w, Source: src, Victim: victim})
		add(traces.Event{Kind: traces.KindPollBegin, Task: task, Worker: w})
		add(traces.Event{Kind: traces.KindPollEnd, Task: task, Worker: w, Result: traces.ResultReady})
	}
	for task := int64(1); task <= 8; task++ {
		add(traces.Event{Kind: traces.KindSpawn, Task: task, Worker: 0, Queue: traces.LocalQueue(0)})
	}
	h := traces.Header{Workers: 3, Policy: "worksteal", Config: map[string]int{"steal-half": 1, "local-cap": 8}}
	legal := func(steal2 int64) []traces.Event {
		ev = ev[:8]
		run(1, 1, traces.SourceSteal, 0)      // moves 2, 3, 4 to worker 1
		run(steal2, 2, traces.SourceSteal, 1) // takes the head of [2 3 4], moves 3 to worker 2
		run(3, 2, traces.SourceLocal, -1)
		run(4, 1, traces.SourceLocal, -1)
		for task := int64(8); task >= 5; task-- {
			run(task, 0, traces.SourceLocal, -1)
		}
		return ev
	}
	res, err := Check(h, legal(2), Options{Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != checker.Holds {
		t.Fatalf("%s", res.Summary())
	}
	// The second thief taking 4 (not the head, 2) is a violation; so is 2
	// never being taken.
	res, err = Check(h, legal(4), Options{Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != checker.Violated {
		t.Fatalf("%s", res.Summary())
	}
}
