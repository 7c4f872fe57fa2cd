package conform

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// parseTrace reads a trace in the text form; lines are trimmed.
func parseTrace(t testing.TB, text string) (traces.Header, []traces.Event) {
	t.Helper()
	h, events, err := traces.ParseText(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return h, events
}

// checkEvents runs a Conformance over events and returns the report.
func checkEvents(t testing.TB, h traces.Header, events []traces.Event) *Report {
	t.Helper()
	c, err := New(h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, e := range events {
		if err := c.Step(e); err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Step returned %T, want *Error: %v", err, err)
			}
			if again := c.Step(e); again != err {
				t.Fatalf("Step after a violation returned %v, want the violation again", again)
			}
			break
		}
	}
	return c.Finish()
}

// The correct traces: one or more per policy, each a run a correct executor
// could record. Each must conform with every task DONE.
var conformGood = []struct {
	name  string
	trace string
	check func(t *testing.T, r *Report)
}{
	{name: "fifo", trace: `
execspec-trace v1 executor=fifo workers=1 policy=fifo
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 w0 take t1 global
#4 w0 poll-begin t1
#5 w0 poll-end t1 pending
#6 w0 take t2 global
#7 w0 poll-begin t2
#8 out wake t1 scheduled -> global
#9 w0 wake t2 notified
#10 w0 poll-end t2 pending
#11 w0 requeue t2 -> global
#12 w0 take t1 global
#13 w0 poll-begin t1
#14 out wake t2 coalesced
#15 w0 poll-end t1 ready
#16 out wake t1 late
#17 w0 take t2 global
#18 w0 poll-begin t2
#19 w0 poll-end t2 ready
#20 w0 park
`, check: func(t *testing.T, r *Report) {
		// t2 was re-queued at the end of its poll (#10) behind t1 (queued
		// at #8), and waited for t1's poll: one poll of another task, from
		// seq 10 to 17.
		if r.MaxOtherPolls != 1 {
			t.Errorf("MaxOtherPolls = %d, want 1", r.MaxOtherPolls)
		}
		if r.MaxDelay != 7 || r.MaxDelayTask != 2 {
			t.Errorf("MaxDelay = %d (t%d), want 7 (t2)", r.MaxDelay, r.MaxDelayTask)
		}
	}},
	{name: "wakeable", trace: `
execspec-trace v1 executor=wakeable workers=2 policy=fifo
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 w0 take t1 global
#4 w1 take t2 global
#5 w1 poll-begin t2
#6 w0 poll-begin t1
#7 w0 wake t2 notified
#8 w1 poll-end t2 pending
#9 w1 requeue t2 -> global
#10 w0 poll-end t1 ready
#11 w0 take t2 global
#12 w0 poll-begin t2
#13 w0 poll-end t2 ready
#14 w1 park
#15 w0 park
#16 w0 unpark
#17 w1 unpark
`},
	{name: "worksteal", trace: `
execspec-trace v1 executor=worksteal workers=2 policy=worksteal local-cap=4 owner-lifo=1 steal-half=0 global-interval=0
#1 out spawn t1 -> global
#2 w0 take t1 global call=1
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w0 spawn t3 -> local:0
#6 w0 spawn t4 -> local:0
#7 w0 poll-end t1 pending
#8 w1 take t2 steal from w0
#9 w0 take t4 local
#10 w1 poll-begin t2
#11 w0 poll-begin t4
#12 w1 wake t1 scheduled -> local:1
#13 w1 wake t4 notified
#14 w0 poll-end t4 pending
#15 w0 requeue t4 -> local:0
#16 w1 poll-end t2 ready
#17 w1 take t1 local
#18 w0 take t4 local
#19 w1 poll-begin t1
#20 w0 poll-begin t4
#21 w0 poll-end t4 ready
#22 w1 poll-end t1 ready
#23 w0 take t3 local
#24 w0 poll-begin t3
#25 w0 poll-end t3 ready
`},
	{name: "worksteal owner fifo, steal half, overflow", trace: `
execspec-trace v1 executor=worksteal workers=2 policy=worksteal local-cap=3 owner-lifo=0 steal-half=1
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w0 spawn t3 -> local:0
#6 w0 spawn t4 -> local:0
#7 w0 spawn t5 -> global
#8 w0 poll-end t1 ready
#9 w1 take t5 global
#10 w1 poll-begin t5
#11 w1 poll-end t5 ready
#12 w1 take t2 steal from w0
#13 w0 take t4 local
#14 w1 poll-begin t2
#15 w0 poll-begin t4
#16 w1 poll-end t2 ready
#17 w1 take t3 local
#18 w1 poll-begin t3
#19 w1 poll-end t3 ready
#20 w0 poll-end t4 ready
`},
	{name: "worksteal global interval", trace: `
execspec-trace v1 executor=worksteal workers=1 policy=worksteal local-cap=4 global-interval=2
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w0 spawn t3 -> local:0
#6 out spawn t4 -> global
#7 w0 poll-end t1 ready
#8 w0 take t4 global
#9 w0 poll-begin t4
#10 w0 poll-end t4 ready
#11 w0 take t3 local
#12 w0 poll-begin t3
#13 w0 poll-end t3 ready
#14 w0 take t2 local
#15 w0 poll-begin t2
#16 w0 poll-end t2 ready
`},
	{name: "worksteal lifo slot", trace: `
execspec-trace v1 executor=worksteal workers=2 policy=worksteal local-cap=2 lifo-slot=1 lifo-max=3
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w0 spawn t3 -> local:0
#6 w0 spawn t4 -> local:0
#7 w0 spawn t5 -> global
#8 w0 poll-end t1 ready
#9 w1 take t5 global
#10 w1 poll-begin t5
#11 w1 poll-end t5 ready
#12 w1 take t3 steal from w0
#13 w0 take t2 lifo
#14 w1 poll-begin t3
#15 w0 poll-begin t2
#16 w0 wake t2 notified
#17 w0 poll-end t2 pending
#18 w0 requeue t2 -> local:0
#19 w1 poll-end t3 ready
#20 w0 take t2 local
#21 w0 poll-begin t2
#22 w0 poll-end t2 ready
#23 w0 take t4 local
#24 w0 poll-begin t4
#25 w0 poll-end t4 ready
`},
	{name: "priority", trace: `
execspec-trace v1 executor=priority workers=1 policy=priority aging=4 max-priority=7
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 out spawn t3 -> global
#4 w0 take t3 global
#5 w0 poll-begin t3
#6 w0 poll-end t3 ready
#7 w0 take t1 global
#8 w0 poll-begin t1
#9 w0 poll-end t1 ready
#10 w0 take t2 global
#11 w0 poll-begin t2
#12 w0 poll-end t2 ready
`, check: func(t *testing.T, r *Report) {
		if r.MaxOtherPolls != 2 || r.MaxOtherPollsTask != 2 {
			t.Errorf("MaxOtherPolls = %d (t%d), want 2 (t2)", r.MaxOtherPolls, r.MaxOtherPollsTask)
		}
	}},
	{name: "timeslice", trace: `
execspec-trace v1 executor=timeslice workers=1 policy=timeslice slice=1
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 w0 take t1 global
#4 w0 poll-begin t1
#5 w0 wake t1 notified
#6 w0 poll-end t1 pending
#7 w0 poll-begin t1
#8 w0 wake t1 notified
#9 w0 poll-end t1 pending
#10 w0 requeue t1 -> global
#11 w0 take t2 global
#12 w0 poll-begin t2
#13 w0 poll-end t2 ready
#14 w0 take t1 global
#15 w0 poll-begin t1
#16 w0 poll-end t1 ready
`, check: func(t *testing.T, r *Report) {
		// t2 waited for t1's take and its re-poll.
		if r.MaxOtherPolls != 2 || r.MaxOtherPollsTask != 2 {
			t.Errorf("MaxOtherPolls = %d (t%d), want 2 (t2)", r.MaxOtherPolls, r.MaxOtherPollsTask)
		}
	}},
	{name: "retry", trace: `
execspec-trace v1 executor=retry workers=1 policy=retry retries=1
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 w0 take t1 global
#4 w0 poll-begin t1
#5 w0 panic t1 detail="boom\nstack"
#6 w0 poll-end t1 panic
#7 w0 requeue t1 -> global
#8 w0 take t2 global
#9 w0 poll-begin t2
#10 w0 panic t2 detail="no retry for this one"
#11 w0 poll-end t2 panic
#12 w0 take t1 global
#13 w0 poll-begin t1
#14 w0 poll-end t1 ready
`, check: func(t *testing.T, r *Report) {
		if len(r.Panics) != 2 || r.Panics[0].Task != 1 || !strings.Contains(r.Panics[0].Msg, "boom") {
			t.Errorf("Panics = %v, want two, the first of t1 with its value", r.Panics)
		}
	}},
	{name: "model step events", trace: `
execspec-trace v1 executor=model workers=1 policy=fifo
#1 out step t1 -> global rule=SPAWN
#2 w0 step t1 rule=GLOBAL-STEAL
#3 w0 step t1 rule=POLL-PENDING
#4 out step t1 -> global rule=WAKE
#5 w0 step t1 rule=TASK-SUSPEND
#6 w0 step t1 rule=GLOBAL-STEAL
#7 w0 step t1 rule=TASK-COMPLETE
`},
}

func TestConformanceGood(t *testing.T) {
	for _, tc := range conformGood {
		t.Run(tc.name, func(t *testing.T) {
			h, events := parseTrace(t, tc.trace)
			r := checkEvents(t, h, events)
			if r.Verdict != checker.Holds {
				t.Fatalf("verdict %s, want holds\n%s", r.Verdict, r.Summary())
			}
			if r.Events != len(events) || r.Completed != r.Tasks || r.Tasks == 0 {
				t.Fatalf("report counts %d events, %d of %d tasks done; want %d events, all done", r.Events, r.Completed, r.Tasks, len(events))
			}
			if len(r.LostWakeups) > 0 || len(r.NeverCompleted) > 0 || len(r.Warnings) > 0 {
				t.Fatalf("findings on a correct trace:\n%s", r.Summary())
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// The broken traces: each is caught at the right event, with the right rule
// and premise.
var conformBad = []struct {
	name    string
	trace   string
	seq     uint64     // Seq of the violating event
	rule    model.Rule // 0: no rule
	premise string     // the premise, exactly
	reason  string     // a piece of the reason
}{
	{name: "steal while the thief had local work", trace: `
execspec-trace v1 executor=x workers=2 policy=worksteal local-cap=4
#1 out spawn t1 -> global
#2 w1 take t1 global
#3 w1 poll-begin t1
#4 w1 spawn t2 -> local:1
#5 w1 spawn t3 -> local:1
#6 w1 poll-end t1 ready
#7 w1 take t3 local
#8 w1 poll-begin t3
#9 w1 spawn t4 -> local:1
#10 w1 poll-end t3 ready
#11 w0 take t2 steal from w1
#12 w0 poll-begin t2
#13 w0 spawn t5 -> local:0
#14 w0 poll-end t2 ready
#15 w0 take t4 steal from w1
`, seq: 15, rule: model.WORKER_STEAL, premise: "local(w) = ∅", reason: "w0's local queue holds [t5]"},
	{name: "steal from the owner end", trace: `
execspec-trace v1 executor=x workers=2 policy=worksteal local-cap=4
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w0 spawn t3 -> local:0
#6 w1 take t3 steal from w0
`, seq: 6, rule: model.WORKER_STEAL, premise: "t at the steal end of local(v)", reason: "holds t2"},
	{name: "owner takes the steal end", trace: `
execspec-trace v1 executor=x workers=2 policy=worksteal local-cap=4 owner-lifo=1
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w0 spawn t3 -> local:0
#6 w0 poll-end t1 ready
#7 w0 take t2 local
`, seq: 7, rule: model.POLL_LOCAL, premise: "t at the owner end of local(w)", reason: "holds t3"},
	{name: "steal while the global queue holds work", trace: `
execspec-trace v1 executor=x workers=2 policy=worksteal local-cap=4
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 out spawn t3 -> global
#6 w1 unpark
#7 w1 take t2 steal from w0 call=6
`, seq: 7, rule: model.WORKER_STEAL, premise: "global = ∅", reason: "global queue holds [t3]"},
	{name: "take of a DONE task", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 poll-end t1 ready
#5 w0 take t1 global
`, seq: 5, rule: model.GLOBAL_STEAL, premise: "global ≠ ∅", reason: "empty"},
	{name: "take of a DONE task from a queue holding others", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 w0 take t1 global
#4 w0 poll-begin t1
#5 w0 poll-end t1 ready
#6 w0 take t1 global
`, seq: 6, rule: model.GLOBAL_STEAL, premise: "t at the head of global", reason: "head is t2"},
	{name: "a NOTIFIED task left WAITING, woken again", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 out wake t1 notified
#5 w0 poll-end t1 pending
#6 out wake t1 scheduled -> global
`, seq: 6, rule: model.TASK_SUSPEND, premise: "TASK-SUSPEND of a NOTIFIED task re-queues it (the wake during the poll is not lost)", reason: "the wake during its poll was lost"},
	{name: "a NOTIFIED task left WAITING, passed over by a take", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 out wake t1 notified
#5 w0 poll-end t1 pending
#6 out spawn t2 -> global
#7 w0 take t2 global
`, seq: 7, rule: model.TASK_SUSPEND, premise: "TASK-SUSPEND of a NOTIFIED task re-queues it (the wake during the poll is not lost)", reason: "the wake during its poll was lost"},
	{name: "two workers take one task", trace: `
execspec-trace v1 executor=x workers=2 policy=worksteal local-cap=4
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w1 take t1 global
`, seq: 3, rule: model.GLOBAL_STEAL, premise: "global ≠ ∅", reason: "empty"},
	{name: "two workers poll one task", trace: `
execspec-trace v1 executor=x workers=2 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w1 poll-begin t1
`, seq: 4, rule: 0, premise: "RUNNING(w): w took the task it polls", reason: "RUNNING on w0: two workers poll it"},
	{name: "a poll after Ready", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 poll-end t1 ready
#5 w0 poll-begin t1
`, seq: 5, rule: model.TASK_COMPLETE, premise: "a DONE task is never polled again", reason: "t1 is DONE"},
	{name: "poll-end after Ready", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 poll-end t1 ready
#5 w0 poll-end t1 pending
`, seq: 5, rule: model.TASK_SUSPEND, premise: "RUNNING(w)", reason: "w0 is idle"},
	{name: "wake reported coalesced while WAITING", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 poll-end t1 pending
#5 out wake t1 coalesced
`, seq: 5, rule: model.WAKE, premise: "WAKE of a WAITING task schedules it (WAITING → QUEUED)", reason: "t1 was WAITING: the wake is lost"},
	{name: "wake during the poll dropped", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 out wake t1 coalesced
`, seq: 4, rule: model.WAKE, premise: "WAKE of a RUNNING task notifies it (RUNNING → NOTIFIED)", reason: "NOTIFIED missing"},
	{name: "wake that enqueues twice", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 poll-end t1 pending
#5 out wake t1 scheduled -> global
#6 out wake t1 scheduled -> global
`, seq: 6, rule: model.WAKE, premise: "WAKE of a QUEUED or NOTIFIED task coalesces (idempotent)", reason: "enqueued twice"},
	{name: "wake that enqueues while running", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 out wake t1 scheduled -> global
`, seq: 4, rule: model.WAKE, premise: "WAKE of a RUNNING task notifies it (RUNNING → NOTIFIED)", reason: "queued while its poll still runs"},
	{name: "requeue to the wrong queue", trace: `
execspec-trace v1 executor=x workers=2 policy=worksteal local-cap=4
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 wake t1 notified
#5 w0 poll-end t1 pending
#6 w0 requeue t1 -> global
`, seq: 6, rule: model.TASK_SUSPEND, premise: "the task goes where the rule pushes it", reason: "re-queued t1 on local:0"},
	{name: "requeue without a notification", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 poll-end t1 pending
#5 w0 requeue t1 -> global
`, seq: 5, rule: model.TASK_SUSPEND, premise: "a re-queue follows TASK-SUSPEND of a NOTIFIED task, or a retried failure", reason: "t1 is WAITING"},
	{name: "spawn of an existing id", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 out spawn t1 -> global
`, seq: 2, rule: model.SPAWN, premise: "task not yet spawned", reason: "t1 is QUEUED"},
	{name: "take of a task never spawned", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t7 global
`, seq: 2, rule: model.GLOBAL_STEAL, premise: "task spawned", reason: "task 7 was never spawned"},
	{name: "wake of a task never spawned", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t3 -> global
#2 out wake t2 scheduled -> global
`, seq: 2, rule: model.WAKE, premise: "task spawned", reason: "task 2 was never spawned"},
	{name: "local push under a single-queue policy", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
`, seq: 4, rule: model.SPAWN, premise: "the policy has one global queue", reason: "the model put t2 on the global queue"},
	{name: "push onto another worker's queue", trace: `
execspec-trace v1 executor=x workers=2 policy=worksteal local-cap=4
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:1
`, seq: 4, rule: model.SPAWN, premise: "pushed on the acting worker's own local queue, or the global queue", reason: "worker 0 pushes onto worker 1's local queue"},
	{name: "overflow dropped: push onto a full local queue", trace: `
execspec-trace v1 executor=x workers=1 policy=worksteal local-cap=1
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w0 spawn t3 -> local:0
`, seq: 5, rule: model.SPAWN, premise: "a push onto a full local queue overflows to the global queue", reason: "capacity 1"},
	{name: "local take when the global check is due", trace: `
execspec-trace v1 executor=x workers=1 policy=worksteal local-cap=4 global-interval=2
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 out spawn t3 -> global
#6 w0 poll-end t1 ready
#7 w0 take t2 local call=6
`, seq: 7, rule: model.POLL_LOCAL, premise: "no global check due", reason: "global queue holds t3"},
	{name: "global take while local work waits", trace: `
execspec-trace v1 executor=x workers=1 policy=worksteal local-cap=4
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 out spawn t3 -> global
#6 w0 poll-end t1 ready
#7 w0 take t3 global
`, seq: 7, rule: model.GLOBAL_STEAL, premise: "local(w) = ∅", reason: "holds [t2]"},
	{name: "fifo order broken", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 w0 take t2 global
`, seq: 3, rule: model.GLOBAL_STEAL, premise: "t at the head of global", reason: "head is t1"},
	{name: "re-poll outside the time slice", trace: `
execspec-trace v1 executor=x workers=1 policy=timeslice slice=1
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 wake t1 notified
#5 w0 poll-end t1 pending
#6 w0 poll-begin t1
#7 w0 wake t1 notified
#8 w0 poll-end t1 pending
#9 w0 poll-begin t1
`, seq: 9, rule: model.TASK_SUSPEND, premise: "woken during the poll, within its slice", reason: "slice used 1 of 1"},
	{name: "re-queue inside the time slice", trace: `
execspec-trace v1 executor=x workers=1 policy=timeslice slice=2
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 wake t1 notified
#5 w0 poll-end t1 pending
#6 w0 requeue t1 -> global
`, seq: 6, rule: model.TASK_SUSPEND, premise: "re-queued only outside its slice", reason: "2 re-polls left"},
	{name: "re-poll without a wake", trace: `
execspec-trace v1 executor=x workers=1 policy=timeslice slice=2
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 poll-end t1 pending
#5 w0 poll-begin t1
`, seq: 5, rule: 0, premise: "RUNNING(w): w took the task it polls", reason: "w0 is idle and t1 is WAITING"},
	{name: "retry re-polls the finished future", trace: `
execspec-trace v1 executor=x workers=1 policy=retry retries=1
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 poll-end t1 ready
#5 w0 requeue t1 -> global
`, seq: 5, rule: model.TASK_SUSPEND, premise: "a re-queue follows TASK-SUSPEND of a NOTIFIED task, or a retried failure", reason: "t1 is DONE"},
	{name: "retry beyond the budget", trace: `
execspec-trace v1 executor=x workers=1 policy=retry retries=1
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 poll-end t1 panic
#5 w0 requeue t1 -> global
#6 w0 take t1 global
#7 w0 poll-begin t1
#8 w0 poll-end t1 panic
#9 w0 requeue t1 -> global
`, seq: 9, rule: model.TASK_COMPLETE, premise: "a failed task is run again at most 1 times (retries)", reason: "t1 failed 2 times"},
	{name: "slot take of a task not in the slot", trace: `
execspec-trace v1 executor=x workers=1 policy=worksteal local-cap=4 lifo-slot=1
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w0 spawn t3 -> local:0
#6 w0 poll-end t1 ready
#7 w0 take t3 lifo
`, seq: 7, rule: model.POLL_LOCAL, premise: "t in the LIFO slot of w", reason: "slot holds t2"},
	{name: "steal from a slot", trace: `
execspec-trace v1 executor=x workers=2 policy=worksteal local-cap=4 lifo-slot=1
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w1 take t2 steal from w0
`, seq: 5, rule: model.WORKER_STEAL, premise: "local(v) ≠ ∅", reason: "w0's local queue is empty"},
	{name: "slot take when the global check is due", trace: `
execspec-trace v1 executor=x workers=1 policy=worksteal local-cap=4 lifo-slot=1 global-interval=2
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 out spawn t3 -> global
#6 w0 poll-end t1 ready
#7 w0 take t2 lifo call=6
`, seq: 7, rule: model.POLL_LOCAL, premise: "no global check due", reason: "global queue holds t3"},
	{name: "seq goes backwards", trace: `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#5 out spawn t2 -> global
#3 w0 take t1 global
`, seq: 3, rule: 0, premise: "Seq increases", reason: "seq 3 comes after seq 5"},
}

func TestConformanceBad(t *testing.T) {
	for _, tc := range conformBad {
		t.Run(tc.name, func(t *testing.T) {
			h, events := parseTrace(t, tc.trace)
			r := checkEvents(t, h, events)
			if r.Verdict != checker.Violated || r.Err == nil {
				t.Fatalf("verdict %s, want violated\n%s", r.Verdict, r.Summary())
			}
			e := r.Err
			if e.Event.Seq != tc.seq || e.Rule != tc.rule || e.Premise != tc.premise || !strings.Contains(e.Reason, tc.reason) {
				t.Fatalf("got seq %d rule %s premise %q reason %q\nwant seq %d rule %s premise %q reason containing %q\n%s",
					e.Event.Seq, e.Rule, e.Premise, e.Reason, tc.seq, tc.rule, tc.premise, tc.reason, e.Error())
			}
			if e.Index != slices.IndexFunc(events, func(x traces.Event) bool { return x.Seq == tc.seq }) {
				t.Errorf("Index %d does not point at the event with seq %d", e.Index, tc.seq)
			}
			if len(e.Before) != min(e.Index, conformBefore) || (len(e.Before) > 0 && e.Before[len(e.Before)-1] != events[e.Index-1]) {
				t.Errorf("Before holds %d events, want the %d before the violation", len(e.Before), min(e.Index, conformBefore))
			}
			if !strings.Contains(e.Error(), "premise "+tc.premise+" fails") || !strings.HasPrefix(e.State, "global ") {
				t.Errorf("message or state malformed:\n%s\n%s", e.Error(), e.State)
			}
			t.Log(e.Error())
		})
	}
}
