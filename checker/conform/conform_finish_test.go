package conform

import (
	"errors"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

func hdr(workers int, policy string, cfg map[string]int) traces.Header {
	return traces.Header{Format: traces.Format, Version: traces.Version, Executor: "test", Workers: workers, Policy: policy, Config: cfg}
}

func TestConformanceUnknownWorker(t *testing.T) {
	c, err := New(hdr(2, "worksteal", map[string]int{"local-cap": 4}))
	if err != nil {
		t.Fatal(err)
	}
	steps := []traces.Event{
		{Seq: 1, Kind: traces.KindSpawn, Task: 1, Worker: -1, Victim: -1, Queue: traces.QueueGlobal},
		{Seq: 2, Kind: traces.KindTake, Task: 1, Worker: 5, Victim: -1, Source: traces.SourceGlobal},
	}
	if err := c.Step(steps[0]); err != nil {
		t.Fatal(err)
	}
	err = c.Step(steps[1])
	var ce *Error
	if !errors.As(err, &ce) || ce.Premise != "0 ≤ w < W" || ce.Rule != model.GLOBAL_STEAL || ce.Index != 1 {
		t.Fatalf("got %v, want a GLOBAL-STEAL violation of 0 ≤ w < W at index 1", err)
	}
	if !strings.Contains(ce.Error(), "no worker 5") {
		t.Errorf("message %q does not name the worker", ce.Error())
	}
}

// Malformed events are violations with a clear premise, never panics.
func TestConformanceMalformed(t *testing.T) {
	h := hdr(2, "worksteal", map[string]int{"local-cap": 4})
	spawn := traces.Event{Seq: 1, Kind: traces.KindSpawn, Task: 1, Worker: -1, Victim: -1, Queue: traces.QueueGlobal}
	for _, tc := range []struct {
		name    string
		e       traces.Event
		premise string
	}{
		{"unknown kind", traces.Event{Seq: 2, Kind: 99, Task: 1, Worker: 0}, "a well-formed event"},
		{"take without worker", traces.Event{Seq: 2, Kind: traces.KindTake, Task: 1, Worker: -1, Source: traces.SourceGlobal}, "a well-formed event"},
		{"steal victim out of range", traces.Event{Seq: 2, Kind: traces.KindTake, Task: 1, Worker: 0, Victim: 9, Source: traces.SourceSteal}, "a well-formed event"},
		{"poll-end without result", traces.Event{Seq: 2, Kind: traces.KindPollEnd, Task: 1, Worker: 0}, "a well-formed event"},
		{"negative worker", traces.Event{Seq: 2, Kind: traces.KindWake, Task: 1, Worker: -7}, "0 ≤ w < W"},
		{"task never spawned", traces.Event{Seq: 2, Kind: traces.KindPollBegin, Task: 2, Worker: 0}, "task spawned"},
		{"step with a bad rule", traces.Event{Seq: 2, Kind: traces.KindStep, Task: 1, Worker: 0, Rule: 42}, "a well-formed event"},
		{"step with a take of no worker", traces.Event{Seq: 2, Kind: traces.KindStep, Task: 1, Worker: -1, Rule: model.POLL_LOCAL}, "0 ≤ w < W"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(h)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Step(spawn); err != nil {
				t.Fatal(err)
			}
			err = c.Step(tc.e)
			var ce *Error
			if !errors.As(err, &ce) || ce.Premise != tc.premise {
				t.Fatalf("got %v, want a violation of %q", err, tc.premise)
			}
			if r := c.Finish(); r.Verdict != checker.Violated || r.Err != ce {
				t.Fatalf("Finish: verdict %s, err %v", r.Verdict, r.Err)
			}
		})
	}
}

// An event beyond a capacity limit of the checker is no violation: the
// verdict is Unknown and the error names the limit.
func TestConformanceLimitIsUnknown(t *testing.T) {
	c, err := New(hdr(2, "worksteal", map[string]int{"local-cap": 4}))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Step(traces.Event{Seq: 1, Kind: traces.KindSpawn, Task: MaxTask + 1, Worker: -1, Victim: -1, Queue: traces.QueueGlobal})
	var ce *Error
	if !errors.As(err, &ce) || ce.Limit == "" || !strings.Contains(ce.Error(), "4194304") {
		t.Fatalf("got %v, want an error naming the limit", err)
	}
	if r := c.Finish(); r.Verdict != checker.Unknown || !strings.HasPrefix(r.Summary(), "unknown: ") || !strings.Contains(r.Summary(), "conform.MaxTask") {
		t.Fatalf("verdict %s, want unknown, with the limit in the summary:\n%s", r.Verdict, r.Summary())
	}
}

func TestConformanceBadHeader(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    traces.Header
		want string
	}{
		{"format", traces.Header{Format: "nope", Version: 1, Workers: 1, Policy: "fifo"}, "unknown trace format"},
		{"version", traces.Header{Format: traces.Format, Version: 7, Workers: 1, Policy: "fifo"}, "unknown trace version 7"},
		{"workers", hdr(0, "fifo", nil), "workers = 0"},
		{"policy", hdr(1, "round-robin", nil), `unknown policy "round-robin"`},
		{"key", hdr(1, "fifo", map[string]int{"colour": 3}), `unknown config key "colour"`},
		{"negative", hdr(1, "worksteal", map[string]int{"local-cap": -1}), "local-cap = -1"},
		{"flag", hdr(1, "worksteal", map[string]int{"steal-half": 2}), "steal-half = 2: want 0 or 1"},
		{"no local queues", hdr(1, "worksteal", map[string]int{"local-cap": 0}), "local-cap = 0"},
		{"global interval", hdr(1, "worksteal", map[string]int{"global-interval": 1000}), "global-interval = 1000"},
		{"slice", hdr(1, "timeslice", map[string]int{"slice": 1000}), "slice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.h)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := New(hdr(64, "worksteal", map[string]int{"local-cap": 256, "global-interval": 61})); err != nil {
		t.Fatalf("a real executor's sizes are refused: %v", err)
	}
}

// A premise that the take could not test atomically is accepted when it
// held at an instant of [Call, Seq], and only then.
func TestConformanceRelaxed(t *testing.T) {
	// w1 began to look for work after its park at #6 at the earliest; the
	// push onto the global queue at #5 came before.
	const steal = `
execspec-trace v1 executor=x workers=2 policy=worksteal local-cap=4
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w1 park
#6 out spawn t3 -> global
#7 w1 unpark
#8 w1 take t2 steal from w0 call=%CALL%
#9 w1 poll-begin t2
#10 w1 poll-end t2 ready
#11 w0 poll-end t1 ready
#12 w0 take t3 global
#13 w0 poll-begin t3
#14 w0 poll-end t3 ready
`
	const due = `
execspec-trace v1 executor=x workers=1 policy=worksteal local-cap=4 global-interval=2
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w0 poll-end t1 ready
#6 out spawn t3 -> global
#7 w0 take t2 local call=%CALL%
#8 w0 poll-begin t2
#9 w0 poll-end t2 ready
#10 w0 take t3 global
#11 w0 poll-begin t3
#12 w0 poll-end t3 ready
`
	for _, tc := range []struct {
		name, trace, call string
		ok                bool
	}{
		{"steal, look before the push", steal, "5", true},
		{"steal, call after the push, unpark after it too", steal, "7", false},
		{"steal, no call tick", steal, "0", false},
		{"due, look before the push", due, "5", true},
		{"due, call after the push, previous event before it", due, "7", true},
		{"due, slot take, look before the push", strings.Replace(strings.Replace(due, "local-cap=4", "local-cap=4 lifo-slot=1", 1), "t2 local", "t2 lifo", 1), "5", true},
		{"due, slot take, no call tick", strings.Replace(strings.Replace(due, "local-cap=4", "local-cap=4 lifo-slot=1", 1), "t2 local", "t2 lifo", 1), "0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(tc.trace, "%CALL%", tc.call, 1)
			if tc.call == "0" {
				text = strings.Replace(text, " call=0", "", 1)
			}
			h, events := parseTrace(t, text)
			r := checkEvents(t, h, events)
			if tc.ok && (r.Verdict != checker.Holds || r.Relaxed != 1) {
				t.Fatalf("verdict %s, relaxed %d; want holds, 1\n%s", r.Verdict, r.Relaxed, r.Summary())
			}
			if !tc.ok && (r.Verdict != checker.Violated || r.Err.Event.Seq != 8 && r.Err.Event.Seq != 7) {
				t.Fatalf("verdict %s; want the take violated\n%s", r.Verdict, r.Summary())
			}
		})
	}
}

// wantAll fails t for each of wants that text, the output named name,
// does not contain.
func wantAll(t *testing.T, name, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", name, w, text)
		}
	}
}

func TestConformanceFindings(t *testing.T) {
	h, events := parseTrace(t, `
execspec-trace v1 executor=x workers=2 policy=worksteal local-cap=4
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 out spawn t3 -> global
#4 w0 take t1 global
#5 w0 poll-begin t1
#6 w0 poll-end t1 pending
#7 out wake t1 scheduled -> global
#8 w1 take t2 global
#9 w1 poll-begin t2
#10 w1 panic t2 detail="index out of range\ngoroutine 7"
#11 w1 poll-end t2 panic
#12 w1 park
#13 w0 take t3 global
#14 w0 poll-begin t3
#15 w0 poll-end t3 pending
`)
	r := checkEvents(t, h, events)
	if r.Verdict != checker.Unknown || r.Err != nil {
		t.Fatalf("verdict %s, want unknown (every event conforms, tasks left)\n%s", r.Verdict, r.Summary())
	}
	if !slices.Equal(r.LostWakeups, []int64{1}) || !slices.Equal(r.NeverCompleted, []int64{1, 3}) {
		t.Errorf("lost wakeups %v, never completed %v; want [1], [1 3]", r.LostWakeups, r.NeverCompleted)
	}
	if r.Tasks != 3 || r.Completed != 1 {
		t.Errorf("tasks %d completed %d, want 3 and 1", r.Tasks, r.Completed)
	}
	if len(r.Panics) != 1 || r.PanicCount != 1 || r.Panics[0].Task != 2 || r.Panics[0].Msg != "task 2 panicked on worker 1: index out of range" {
		t.Errorf("panics %v", r.Panics)
	}
	// w1 parked at #12 while the global queue held t3 and t1; t3 was
	// taken, but the queue never became empty and w1 never unparked.
	if len(r.Warnings) != 1 || r.Warnings[0].Worker != 1 || r.Warnings[0].Seq != 12 || !strings.Contains(r.Warnings[0].Msg, "global queue held [t1]") {
		t.Errorf("warnings %v, want w1's park at #12", r.Warnings)
	}
	sum := r.Summary()
	wantAll(t, "summary", sum, "lost wakeups (woken, never polled again, not DONE): t1", "never completed: t1 t3", "panic:", "warning:")
}

// A park is not reported when the worker unparked, or when the queue it
// left non-empty became empty meanwhile.
func TestConformanceParkNoFalseAlarm(t *testing.T) {
	h, events := parseTrace(t, `
execspec-trace v1 executor=x workers=2 policy=fifo
#1 out spawn t1 -> global
#2 w0 park
#3 w1 park
#4 w1 unpark
#5 w1 take t1 global
#6 w1 poll-begin t1
#7 w1 poll-end t1 ready
`)
	if r := checkEvents(t, h, events); r.Verdict != checker.Holds || len(r.Warnings) != 0 {
		t.Fatalf("verdict %s, warnings %v; want holds and none", r.Verdict, r.Warnings)
	}
}

func TestConformanceLanes(t *testing.T) {
	h, events := parseTrace(t, `
execspec-trace v1 executor=x workers=2 policy=worksteal local-cap=4 lifo-slot=1
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 w0 take t1 global
#4 w0 poll-begin t1
#5 w0 spawn t3 -> local:0
`)
	c, err := New(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if err := c.Step(e); err != nil {
			t.Fatal(err)
		}
	}
	got := c.Lanes()
	for _, want := range []string{"global [t2]", "w0 polls t1  local [t3]", "w1 idle  local []", "t1:RUNNING", "w0 LIFO slot t3"} {
		if !strings.Contains(got, want) {
			t.Errorf("lanes lack %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n < 3 {
		t.Errorf("lanes on %d lines, want one per queue and worker:\n%s", n+1, got)
	}
}

// The model's invariants are checked after the events: a state the rules
// cannot reach is reported with the invariant it breaks.
func TestConformanceInvariantChecked(t *testing.T) {
	h, events := parseTrace(t, `
execspec-trace v1 executor=x workers=1 policy=fifo
#1 out spawn t1 -> global
#2 out spawn t2 -> global
`)
	c, err := New(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Step(events[0]); err != nil {
		t.Fatal(err)
	}
	c.s.Global = append(c.s.Global, 1) // t1 twice in the queue
	err = c.Step(events[1])
	var ce *Error
	if !errors.As(err, &ce) || ce.Premise != "invariant single-queue" || ce.Rule != model.WAKE {
		t.Fatalf("got %v, want the single-queue invariant", err)
	}
}

func TestCheckTrace(t *testing.T) {
	h, events := readTrace(t, "fifo_ok.txt")
	all := func(events []traces.Event, fail error) iter.Seq2[traces.Event, error] {
		return func(yield func(traces.Event, error) bool) {
			for _, e := range events {
				if !yield(e, nil) {
					return
				}
			}
			if fail != nil {
				yield(traces.Event{}, fail)
			}
		}
	}
	r, err := Check(h, all(events, nil))
	if err != nil || r.Verdict != checker.Holds || r.Events != len(events) {
		t.Fatalf("Check: %v, %+v", err, r)
	}
	bad := errors.New("trace.jsonl:9: truncated")
	r, err = Check(h, all(events[:5], bad))
	if !errors.Is(err, bad) || r == nil || r.Events != 5 {
		t.Fatalf("Check with a read error: %v, %+v", err, r)
	}
	if _, err := Check(hdr(1, "nope", nil), all(events, nil)); err == nil {
		t.Fatal("Check accepted a bad header")
	}
	// A violation stops the check and is in the report, not an error.
	h2, bad2 := readTrace(t, "steal_with_local_work.txt")
	r, err = Check(h2, all(bad2, nil))
	if err != nil || r.Verdict != checker.Violated || r.Events != len(bad2) {
		t.Fatalf("Check of a violation: %v, %+v", err, r)
	}
}

func TestConformanceStepAfterFinish(t *testing.T) {
	c, _ := New(hdr(1, "fifo", nil))
	r := c.Finish()
	if r.Verdict != checker.Holds || c.Finish() != r {
		t.Fatalf("empty trace: %+v", r)
	}
	if err := c.Step(traces.Event{Seq: 1, Kind: traces.KindSpawn, Task: 1, Worker: -1, Queue: traces.QueueGlobal}); err == nil {
		t.Fatal("Step after Finish accepted")
	}
}

// A task that starves shows in the fairness figures with the wait it had
// so far, flagged as still waiting.
func TestConformanceStarvingTask(t *testing.T) {
	h, events := parseTrace(t, `
execspec-trace v1 executor=x workers=1 policy=priority
#1 out spawn t1 -> global
#2 out spawn t2 -> global
#3 w0 take t2 global
#4 w0 poll-begin t2
#5 w0 wake t2 notified
#6 w0 poll-end t2 pending
#7 w0 requeue t2 -> global
#8 w0 take t2 global
#9 w0 poll-begin t2
#10 w0 wake t2 notified
#11 w0 poll-end t2 pending
#12 w0 requeue t2 -> global
#13 w0 take t2 global
#14 w0 poll-begin t2
`)
	r := checkEvents(t, h, events)
	if r.Verdict != checker.Unknown || r.MaxOtherPolls != 3 || r.MaxOtherPollsTask != 1 || !r.StillWaiting {
		t.Fatalf("verdict %s, max other polls %d (t%d, still waiting %v); want unknown, 3 (t1, still waiting)\n%s",
			r.Verdict, r.MaxOtherPolls, r.MaxOtherPollsTask, r.StillWaiting, r.Summary())
	}
	if !strings.Contains(r.Summary(), "(t1, still waiting at the end)") {
		t.Errorf("summary does not say t1 is still waiting:\n%s", r.Summary())
	}
}

// Step events know nothing of LIFO slots: one that takes the slot's task
// leaves the checker consistent, and a later take from the slot is a
// violation, not a panic.
func TestConformanceStepEventsAndSlots(t *testing.T) {
	h, events := parseTrace(t, `
execspec-trace v1 executor=x workers=1 policy=worksteal local-cap=2 lifo-slot=1
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 spawn t2 -> local:0
#5 w0 poll-end t1 ready
#6 w0 step t2 rule=POLL-LOCAL
#7 w0 step t2 rule=TASK-COMPLETE
#8 w0 spawn t3 -> local:0
#9 w0 take t2 lifo
`)
	r := checkEvents(t, h, events)
	if r.Verdict != checker.Violated || r.Err.Event.Seq != 9 || r.Err.Premise != "t in the LIFO slot of w" {
		t.Fatalf("got %s; want the slot take at #9 refused\n%s", r.Verdict, r.Summary())
	}
}
