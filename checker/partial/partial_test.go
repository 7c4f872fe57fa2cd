package partial

import (
	"slices"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/internal/partialgen"
	"github.com/execspec/execspec/traces"
)

// pt builds the events of a partial trace, numbering seq from 1.
type pt struct{ ev []traces.Event }

func (b *pt) add(e traces.Event) *pt {
	e.Seq = uint64(len(b.ev) + 1)
	if e.Kind != traces.KindSpawn && e.Kind != traces.KindWake && e.Kind != traces.KindStop && e.Worker == 0 && e.Victim == 0 {
		e.Victim = -1
	}
	b.ev = append(b.ev, e)
	return b
}
func (b *pt) spawn(t int64) *pt {
	return b.add(traces.Event{Kind: traces.KindSpawn, Task: t, Worker: -1})
}
func (b *pt) begin(t int64, w int32) *pt {
	return b.add(traces.Event{Kind: traces.KindPollBegin, Task: t, Worker: w})
}
func (b *pt) end(t int64, w int32, r traces.Result) *pt {
	return b.add(traces.Event{Kind: traces.KindPollEnd, Task: t, Worker: w, Result: r})
}
func (b *pt) wake(t int64, w int32) *pt {
	return b.add(traces.Event{Kind: traces.KindWake, Task: t, Worker: w})
}
func (b *pt) last(f func(e *traces.Event)) *pt { f(&b.ev[len(b.ev)-1]); return b }

const (
	pending = traces.ResultPending
	ready   = traces.ResultReady
)

func tokioHeader() traces.Header {
	return traces.Header{Format: traces.Format, Version: traces.Version, Executor: "tokio-wrapper", Workers: 2, Policy: "unknown", Minor: traces.Minor,
		Unobserved: []string{ObsTake, ObsQueue, ObsOutcome}}
}

func runPartial(t *testing.T, h traces.Header, ev []traces.Event) *Report {
	t.Helper()
	c, err := New(h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, e := range ev {
		if c.Step(e) != nil {
			break
		}
	}
	return c.Finish()
}

// conformingPartial is a trace of the wrapper around two workers: spawns
// from a task and from outside, wakes from a worker and from outside, a
// wake during a poll that returns Pending (re-polled), a late wake.
func conformingPartial() *pt {
	b := &pt{}
	b.spawn(1).begin(1, 0)
	b.spawn(2).last(func(e *traces.Event) { e.Worker = 0 })
	b.spawn(3).last(func(e *traces.Event) { e.Worker = 0 })
	b.end(1, 0, pending).begin(3, 0).begin(2, 1).wake(1, 1).end(2, 1, ready)
	b.wake(3, -1).end(3, 0, pending) // woken during its poll: polled again
	b.begin(1, 1).begin(3, 0).end(1, 1, ready).wake(1, -1).end(3, 0, ready)
	return b
}

func TestPartialConforms(t *testing.T) {
	r := runPartial(t, tokioHeader(), conformingPartial().ev)
	if r.Verdict != checker.Holds || r.Err != nil {
		t.Fatalf("verdict %v, err %v\n%s", r.Verdict, r.Err, r.Summary())
	}
	if r.Tasks != 3 || r.Completed != 3 || r.Polls != 5 || r.LateWakes != 1 || !slices.Equal(r.WorkerPolls, []int{3, 2}) {
		t.Errorf("counts: tasks %d completed %d polls %d late %d per worker %v", r.Tasks, r.Completed, r.Polls, r.LateWakes, r.WorkerPolls)
	}
	if r.SpawnDelay.Count != 3 || r.WakeDelay.Count != 2 {
		t.Errorf("waits: spawn %d wake %d, want 3 and 2", r.SpawnDelay.Count, r.WakeDelay.Count)
	}
	// Never a silent pass: every rule not checked is named, with a reason.
	s := r.Summary()
	for _, w := range []string{"not checked (", "take-rules", "spawn-placement", "wake-placement", "wake-outcome", "capacity-overflow", "notified-requeue", "park", "take unobserved", "outcome unobserved"} {
		if !strings.Contains(s, w) {
			t.Errorf("summary lacks %q:\n%s", w, s)
		}
	}
	for _, u := range r.Unchecked {
		if u.Reason == "" {
			t.Errorf("%s: no reason", u.Name)
		}
	}
}

// TestPartialViolations: each checked rule against a trace that breaks it.
func TestPartialViolations(t *testing.T) {
	h := tokioHeader()
	retry := tokioHeader()
	retry.Policy, retry.Config = "retry", map[string]int{"retries": 1}
	spur := tokioHeader()
	spur.Config = map[string]int{"spurious-polls": 1}
	outcomes := tokioHeader()
	outcomes.Unobserved = []string{ObsTake, ObsQueue}
	takes := tokioHeader()
	takes.Unobserved = []string{ObsQueue, ObsOutcome}
	withOutcome := func(o traces.Outcome) func(*traces.Event) { return func(e *traces.Event) { e.Outcome = o } }
	fut := func(f int64) func(*traces.Event) { return func(e *traces.Event) { e.Future = f } }
	take := func(b *pt, t int64, w int32) *pt {
		return b.add(traces.Event{Kind: traces.KindTake, Task: t, Worker: w, Source: traces.SourceGlobal, Victim: -1})
	}
	cases := []struct {
		name  string
		h     traces.Header
		b     *pt
		check string // the Rules entry that fails; "" = none
		at    int    // its event, from 1
	}{
		{"poll after ready", h, (&pt{}).spawn(1).begin(1, 0).wake(1, -1).end(1, 0, ready).begin(1, 1), "done-is-final", 5},
		{"poll after panic", h, (&pt{}).spawn(1).begin(1, 0).end(1, 0, traces.ResultPanic).begin(1, 1), "done-is-final", 4},
		{"concurrent polls", h, (&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).wake(1, -1).begin(1, 0).begin(1, 1), "exclusive-poll", 6},
		{"poll-begin twice", h, (&pt{}).spawn(1).begin(1, 0).begin(1, 0), "one-poll-per-worker", 3},
		{"worker polls two tasks", h, (&pt{}).spawn(1).spawn(2).begin(1, 0).begin(2, 0), "one-poll-per-worker", 4},
		{"poll-end by another worker", h, (&pt{}).spawn(1).begin(1, 0).end(1, 1, ready), "one-poll-per-worker", 3},
		{"poll-end without a poll", h, (&pt{}).spawn(1).end(1, 0, ready), "one-poll-per-worker", 2},
		{"poll never spawned", h, (&pt{}).spawn(1).begin(2, 0), "spawned-once", 2},
		{"spawned twice", h, (&pt{}).spawn(1).spawn(1), "spawned-once", 2},
		{"poll without a wake", h, (&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).begin(1, 0), "woken-before-poll", 4},
		{"wake before the poll began does not count", h, (&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).wake(1, -1).begin(1, 0).end(1, 0, pending).begin(1, 1), "woken-before-poll", 7},
		// Takes unobserved: a second wake before a poll may have reached the
		// executor after that poll's take; it owes one more poll, not two.
		{"second wake before the poll", h, (&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).wake(1, -1).wake(1, 1).begin(1, 0).end(1, 0, pending).begin(1, 1).end(1, 1, ready), "", 0},
		{"wake before the first poll", h, (&pt{}).spawn(1).wake(1, -1).begin(1, 0).end(1, 0, pending).begin(1, 1).end(1, 1, ready), "", 0},
		{"second wake owes one poll, not two", h, (&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).wake(1, -1).wake(1, 1).begin(1, 0).end(1, 0, pending).begin(1, 1).end(1, 1, pending).begin(1, 0), "woken-before-poll", 10},
		{"second wake, takes observed", takes, take(take((&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).wake(1, -1).wake(1, 1), 1, 0).begin(1, 0).end(1, 0, pending), 1, 1), "take-of-queued", 9},
		{"spurious poll declared", spur, (&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).begin(1, 0).end(1, 0, ready), "", 0},
		{"busy re-queue", h, (&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).add(traces.Event{Kind: traces.KindRequeue, Task: 1, Worker: 0}), "woken-before-poll", 4},
		{"busy re-queue declared", spur, (&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).add(traces.Event{Kind: traces.KindRequeue, Task: 1, Worker: 0}).begin(1, 1).end(1, 1, ready), "", 0},
		{"wake of an unknown task", h, (&pt{}).spawn(1).wake(7, -1), "wake-of-spawned", 2},
		{"no-task wake", h, (&pt{}).spawn(1).wake(0, -1).begin(1, 0).end(1, 0, ready), "", 0},
		{"re-polls a finished future", retry, (&pt{}).spawn(1).begin(1, 0).last(fut(1)).end(1, 0, traces.ResultError).last(fut(1)).begin(1, 0).last(fut(1)), "future-instance", 4},
		{"retry with a new future", retry, (&pt{}).spawn(1).begin(1, 0).last(fut(1)).end(1, 0, traces.ResultError).last(fut(1)).begin(1, 0).last(fut(2)).end(1, 0, ready).last(fut(2)), "", 0},
		{"poll-end of another future", h, (&pt{}).spawn(1).begin(1, 0).last(fut(1)).end(1, 0, ready).last(fut(2)), "future-instance", 3},
		{"retries spent", retry, (&pt{}).spawn(1).begin(1, 0).end(1, 0, traces.ResultPanic).begin(1, 0).end(1, 0, traces.ResultPanic).begin(1, 1), "done-is-final", 6},
		{"event after stop", h, (&pt{}).spawn(1).add(traces.Event{Kind: traces.KindStop, Worker: -1}).begin(1, 0), "stop-is-final", 3},
		{"event of a stopped worker", h, (&pt{}).spawn(1).add(traces.Event{Kind: traces.KindStop, Worker: 1}).begin(1, 0).end(1, 0, pending).wake(1, 1), "stop-is-final", 5},
		{"time goes back", h, (&pt{}).spawn(1).begin(1, 0).last(func(e *traces.Event) { e.Time = 500 }).end(1, 0, ready).last(func(e *traces.Event) { e.Time = 400 }), "time-per-worker", 3},
		{"out of seq order", h, (&pt{}).spawn(1).begin(1, 0).last(func(e *traces.Event) { e.Seq = 0 }), "a well-formed event", 2},
		{"a take when takes are unobserved", h, take((&pt{}).spawn(1), 1, 0), "a well-formed event", 2},
		{"an outcome when outcomes are unobserved", h, (&pt{}).spawn(1).wake(1, -1).last(withOutcome(traces.OutcomeCoalesced)), "a well-formed event", 2},
		{"a step", h, (&pt{}).add(traces.Event{Kind: traces.KindStep, Task: 1, Worker: -1, Rule: 1}), "a well-formed event", 1},
		// Outcomes observed: WAKE's outcome for the observed state.
		{"scheduled while waiting", outcomes, (&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).wake(1, -1).last(withOutcome(traces.OutcomeScheduled)).begin(1, 1).end(1, 1, ready), "", 0},
		{"notified before the poll began", outcomes, (&pt{}).spawn(1).wake(1, -1).last(withOutcome(traces.OutcomeNotified)).begin(1, 1).end(1, 1, ready), "", 0},
		{"coalesced while waiting", outcomes, (&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).wake(1, -1).last(withOutcome(traces.OutcomeCoalesced)), "wake-outcome", 4},
		{"scheduled while running", outcomes, (&pt{}).spawn(1).begin(1, 0).wake(1, -1).last(withOutcome(traces.OutcomeScheduled)), "wake-outcome", 3},
		{"dropped", outcomes, (&pt{}).spawn(1).begin(1, 0).wake(1, -1).last(withOutcome(traces.OutcomeDropped)), "wake-outcome", 3},
		{"not late after ready", outcomes, (&pt{}).spawn(1).begin(1, 0).end(1, 0, ready).wake(1, -1).last(withOutcome(traces.OutcomeCoalesced)), "wake-outcome", 4},
		// Takes observed.
		{"take then poll", takes, take((&pt{}).spawn(1), 1, 0).begin(1, 0).end(1, 0, ready), "", 0},
		{"take of a waiting task", takes, take((&pt{}).spawn(1).begin(1, 0).end(1, 0, pending), 1, 1), "take-of-queued", 4},
		{"take by a busy worker", takes, take((&pt{}).spawn(1).spawn(2).begin(1, 0), 2, 0), "one-poll-per-worker", 4},
		{"poll by another worker than the taker", takes, take((&pt{}).spawn(1), 1, 0).begin(1, 1), "exclusive-poll", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runPartial(t, c.h, c.b.ev)
			if c.check == "" {
				if r.Verdict != checker.Holds {
					t.Fatalf("verdict %v, want holds\n%s", r.Verdict, r.Summary())
				}
				return
			}
			if r.Verdict != checker.Violated || r.Err == nil {
				t.Fatalf("verdict %v, want violated (%s)\n%s", r.Verdict, c.check, r.Summary())
			}
			if r.Err.Premise != c.check || r.Err.Index+1 != c.at {
				t.Errorf("violation of %q at event %d, want %q at event %d", r.Err.Premise, r.Err.Index+1, c.check, c.at)
				t.Logf("%s", r.Err.Msg)
			}
			if len(r.Err.Before) != c.at-1 || r.Err.State == "" {
				t.Errorf("%d events before, want %d; state %q", len(r.Err.Before), c.at-1, r.Err.State)
			}
		})
	}
}

// A poll owed to a second wake that may have reached the executor after
// the take before it is counted, and named in the summary.
func TestPartialWokenAtTakeCounted(t *testing.T) {
	b := (&pt{}).spawn(1).begin(1, 0).end(1, 0, pending).wake(1, -1).wake(1, 1).begin(1, 0).end(1, 0, pending).begin(1, 1).end(1, 1, ready)
	r := runPartial(t, tokioHeader(), b.ev)
	if r.Verdict != checker.Holds || r.WokenAtTake != 1 || r.SpuriousPolls != 0 {
		t.Fatalf("verdict %v, woken at take %d, spurious %d\n%s", r.Verdict, r.WokenAtTake, r.SpuriousPolls, r.Summary())
	}
	if !strings.Contains(r.Summary(), "may have reached the executor after the take before them: 1") {
		t.Fatalf("not in the summary:\n%s", r.Summary())
	}
}

func TestPartialLostWakeup(t *testing.T) {
	// t1 is woken during its poll, which returns Pending, and never polled
	// again; t2's wake is honoured; t3 is woken during a poll that returns
	// Ready (no poll owed).
	b := (&pt{}).spawn(1).spawn(2).spawn(3).begin(1, 0).begin(2, 1).wake(1, 1).end(1, 0, pending).end(2, 1, pending)
	b.wake(2, -1).begin(2, 0).begin(3, 1).wake(3, -1).end(3, 1, ready).end(2, 0, ready)
	r := runPartial(t, tokioHeader(), b.ev)
	if r.Verdict != checker.Unknown || !slices.Equal(r.LostWakeups, []int64{1}) || !slices.Equal(r.NeverCompleted, []int64{1}) {
		t.Fatalf("verdict %v lost %v never %v, want unknown [1] [1]\n%s", r.Verdict, r.LostWakeups, r.NeverCompleted, r.Summary())
	}
	if !r.WakeDelay.StillWaiting || r.WakeDelay.MaxOtherPollsTask != 1 {
		t.Errorf("t1's wait so far is not the worst: %+v", r.WakeDelay)
	}
	// The same, ended by a stop of the executor: abandoned, not lost.
	b.add(traces.Event{Kind: traces.KindStop, Worker: -1})
	r = runPartial(t, tokioHeader(), b.ev)
	if r.Verdict != checker.Holds || len(r.LostWakeups) != 0 || len(r.Abandoned) != 1 || r.Abandoned[0].Task != 1 || !r.Stopped {
		t.Fatalf("verdict %v lost %v abandoned %v, want holds, t1 abandoned\n%s", r.Verdict, r.LostWakeups, r.Abandoned, r.Summary())
	}
	if !strings.Contains(r.Summary(), "abandoned at stop: t1 READY (woken, not yet polled)") {
		t.Errorf("summary:\n%s", r.Summary())
	}
}

func TestPartialCounts(t *testing.T) {
	b := (&pt{}).spawn(1).last(func(e *traces.Event) { e.Time = 100 }).spawn(2).last(func(e *traces.Event) { e.Time = 120 })
	b.begin(2, 0).last(func(e *traces.Event) { e.Time = 200 }).end(2, 0, ready).last(func(e *traces.Event) { e.Time = 300 })
	b.begin(1, 0).last(func(e *traces.Event) { e.Time = 350 }).end(1, 0, pending).last(func(e *traces.Event) { e.Time = 400 })
	b.wake(0, -1).wake(0, 1).wake(1, 1).last(func(e *traces.Event) { e.Time = 1000 })
	b.begin(1, 1).last(func(e *traces.Event) { e.Time = 1700 }).end(1, 1, ready)
	r := runPartial(t, tokioHeader(), b.ev)
	if r.Verdict != checker.Holds || r.NoTaskWakes != 2 {
		t.Fatalf("verdict %v, no-task wakes %d\n%s", r.Verdict, r.NoTaskWakes, r.Summary())
	}
	sd, wd := r.SpawnDelay, r.WakeDelay
	if sd.Count != 2 || sd.MaxOtherPolls != 1 || sd.MaxOtherPollsTask != 1 || sd.MaxTime != 250 || sd.MaxTimeTask != 1 || sd.MaxTicks != 4 || sd.Timed != 2 || sd.MeanTime() != 165 {
		t.Errorf("spawn delays %+v", sd)
	}
	if wd.Count != 1 || wd.MaxTime != 700 || wd.MaxTicks != 1 || wd.MaxOtherPolls != 0 {
		t.Errorf("wake delays %+v", wd)
	}
}

// TestPartialScope: the rules not checked follow from the unobserved list.
func TestPartialScope(t *testing.T) {
	names := func(us []Unchecked) []string {
		var n []string
		for _, u := range us {
			n = append(n, u.Name)
		}
		return n
	}
	replayed := []string{"spawn-placement", "take-rules", "wake-placement", "notified-requeue", "single-queue"}
	cases := []struct {
		unobs, policy   string
		checked, notChk []string
		replay          bool
	}{
		{"take,queue,outcome", "unknown", []string{"done-is-final", "lost-wakeup"}, append([]string{"wake-outcome", "take-of-queued", "slice", "capacity-overflow", "priority-order"}, replayed...), false},
		{"take,queue", "fifo", []string{"wake-outcome"}, append([]string{"take-of-queued"}, replayed...), false},
		{"queue,outcome", "fifo", []string{"take-of-queued"}, append([]string{"wake-outcome"}, replayed...), false},
		{"source", "worksteal", []string{"take-of-queued", "wake-outcome"}, append([]string{"capacity-overflow"}, replayed...), false},
		{"outcome", "fifo", append([]string{"take-of-queued", "park"}, replayed...), []string{"wake-outcome"}, true},
		{"outcome,park", "worksteal", append([]string{"take-of-queued", "capacity-overflow"}, replayed...), []string{"wake-outcome", "park"}, true},
		{"outcome", "unknown", []string{"take-of-queued"}, append([]string{"wake-outcome", "park"}, replayed...), false},
	}
	for _, c := range cases {
		h := tokioHeader()
		h.Unobserved, h.Policy = strings.Split(c.unobs, ","), c.policy
		pc, err := New(h)
		if err != nil {
			t.Fatalf("%s: %v", c.unobs, err)
		}
		r := pc.Finish()
		un := names(r.Unchecked)
		for _, n := range c.checked {
			if !slices.Contains(r.Checked, n) || slices.Contains(un, n) {
				t.Errorf("%s/%s: %s not checked; checked %v", c.unobs, c.policy, n, r.Checked)
			}
		}
		for _, n := range c.notChk {
			if !slices.Contains(un, n) || slices.Contains(r.Checked, n) {
				t.Errorf("%s/%s: %s not named unchecked; unchecked %v", c.unobs, c.policy, n, un)
			}
		}
		if r.Replayed != c.replay {
			t.Errorf("%s/%s: replayed %v, want %v", c.unobs, c.policy, r.Replayed, c.replay)
		}
		if len(r.Checked)+len(r.Unchecked) < 15 {
			t.Errorf("%s: %d rules checked or named, want every rule", c.unobs, len(r.Checked)+len(r.Unchecked))
		}
	}
	h := tokioHeader()
	h.Unobserved, h.Policy = []string{ObsOutcome}, "unknown"
	pc, _ := New(h)
	for _, u := range pc.Finish().Unchecked {
		if u.Name == "take-rules" && !strings.Contains(u.Reason, "the model cannot replay this trace's header") {
			t.Errorf("take-rules reason %q", u.Reason)
		}
	}
}

// TestPartialReplay: with take, source and queue observed the queues are
// replayed through the model, and a take out of FIFO order is caught.
func TestPartialReplay(t *testing.T) {
	h := traces.Header{Format: traces.Format, Version: traces.Version, Workers: 1, Policy: "fifo", Minor: traces.Minor, Unobserved: []string{ObsOutcome}}
	b := &pt{}
	b.add(traces.Event{Kind: traces.KindSpawn, Task: 1, Worker: -1, Queue: traces.QueueGlobal})
	b.add(traces.Event{Kind: traces.KindSpawn, Task: 2, Worker: -1, Queue: traces.QueueGlobal})
	b.add(traces.Event{Kind: traces.KindTake, Task: 2, Worker: 0, Source: traces.SourceGlobal, Victim: -1})
	r := runPartial(t, h, b.ev)
	if r.Verdict != checker.Violated || r.Err.Rule.String() != "GLOBAL-STEAL" || r.Err.Index != 2 || len(r.Err.Before) != 2 {
		t.Fatalf("verdict %v err %v, want GLOBAL-STEAL at event 3", r.Verdict, r.Err)
	}
	b.ev[2].Task = 1
	b.add(traces.Event{Kind: traces.KindPollEnd, Task: 1, Worker: 0, Result: ready, Victim: -1})
	if r := runPartial(t, h, b.ev); r.Verdict != checker.Unknown || !slices.Equal(r.NeverCompleted, []int64{2}) {
		t.Fatalf("verdict %v never %v, want unknown [2]", r.Verdict, r.NeverCompleted)
	}
}

func TestPartialHeader(t *testing.T) {
	for _, c := range []struct {
		mod  func(*traces.Header)
		want string
	}{
		{func(h *traces.Header) { h.Unobserved = []string{"take", "queues"} }, `unobserved "queues", want names from`},
		{func(h *traces.Header) { h.Unobserved = []string{"take", "take"} }, `unobserved names "take" twice`},
		{func(h *traces.Header) { h.Config = map[string]int{"nope": 1} }, `unknown config key "nope"`},
		{func(h *traces.Header) { h.Config = map[string]int{"spurious-polls": 2} }, "spurious-polls = 2"},
		{func(h *traces.Header) { h.Policy = "round-robin" }, `unknown policy "round-robin"`},
		{func(h *traces.Header) { h.Workers = 0 }, "workers = 0"},
	} {
		h := tokioHeader()
		c.mod(&h)
		if _, err := New(h); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

func TestPartialLimit(t *testing.T) {
	r := runPartial(t, tokioHeader(), (&pt{}).spawn(conform.MaxTask+1).ev)
	if r.Verdict != checker.Unknown || r.Err == nil || r.Err.Limit == "" {
		t.Fatalf("verdict %v err %v, want unknown at a limit", r.Verdict, r.Err)
	}
}

// TestPartialNoAllocPerEvent: once the task table has grown, checking
// costs no allocation per event (nothing is kept per event).
func TestPartialNoAllocPerEvent(t *testing.T) {
	c, err := New(tokioHeader())
	if err != nil {
		t.Fatal(err)
	}
	ev := genPartial(2, 64, 1<<12, 1)
	for _, e := range ev[:len(ev)/2] {
		if err := c.Step(e); err != nil {
			t.Fatal(err)
		}
	}
	rest := ev[len(ev)/2:]
	i := 0
	allocs := testing.AllocsPerRun(len(rest)-1, func() {
		if err := c.Step(rest[i]); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per event", allocs)
	}
}

func TestPartialGenerated(t *testing.T) {
	ev := genPartial(4, 256, 20000, 7)
	r := runPartial(t, partialgen.Header(4), ev)
	if r.Verdict != checker.Holds {
		t.Fatalf("generated trace: %v\n%s", r.Verdict, r.Summary())
	}
	if r.Events != len(ev) || r.NoTaskWakes == 0 || r.WakeDelay.Count == 0 || r.SpawnDelay.MaxTimeTask == 0 {
		t.Errorf("report %+v", r)
	}
}

func TestPartialStepAfterFinish(t *testing.T) {
	c, _ := New(tokioHeader())
	c.Finish()
	if err := c.Step(traces.Event{Kind: traces.KindSpawn, Task: 1, Worker: -1}); err == nil {
		t.Error("Step after Finish: no error")
	}
}

// genPartial is a conforming tokio-style partial trace with times and
// future ids (internal/partialgen).
func genPartial(workers, live, events int, seed uint64) []traces.Event {
	return partialgen.Events(partialgen.Options{Workers: workers, Live: live, Events: events, Seed: seed, V11: true})
}

// pingPong is a starvation in the making: a victim spawned first, then two
// tasks that wake each other on worker 0 for rounds rounds; with polled the
// victim's one poll comes after them.
func pingPong(rounds int, polled bool) []traces.Event {
	b := &pt{}
	b.spawn(1).spawn(2).spawn(3)
	for i := 0; i < rounds; i++ {
		b.begin(2, 0).wake(3, 0).end(2, 0, pending).begin(3, 0).wake(2, 0).end(3, 0, pending)
	}
	b.begin(2, 0).wake(3, 0).end(2, 0, ready).begin(3, 0).end(3, 0, ready)
	if polled {
		b.begin(1, 0).end(1, 0, ready)
	}
	return b.ev
}

// A wait longer than the fairness bound is a violation at the poll that
// ends it, or at the end for a task never polled; within the bound, or
// without one, the trace holds and only the figures tell.
func TestPartialFairnessBound(t *testing.T) {
	h := tokioHeader()
	run := func(bound uint64, ev []traces.Event) *Report {
		c, err := New(h)
		if err != nil {
			t.Fatal(err)
		}
		c.SetFairnessBound(bound)
		for _, e := range ev {
			if c.Step(e) != nil {
				break
			}
		}
		return c.Finish()
	}
	r := run(128, pingPong(100, true))
	if r.Verdict != checker.Violated || r.Err.Premise != "bounded-fairness" {
		t.Fatalf("a 202-poll wait with bound 128: %v %v", r.Verdict, r.Err)
	}
	if !strings.Contains(r.Err.Msg, "t1 waited 202 polls of other tasks since its spawn at event 1: more than the bound of 128") || r.Err.Event.Task != 1 || r.Err.Event.Kind != traces.KindPollBegin {
		t.Errorf("message or event: %q %+v", r.Err.Msg, r.Err.Event)
	}
	if !slices.Contains(r.Checked, "bounded-fairness") {
		t.Errorf("checked: %v", r.Checked)
	}
	for _, bound := range []uint64{0, 202, 1000} {
		if r := run(bound, pingPong(100, true)); r.Verdict != checker.Holds || r.SpawnDelay.MaxOtherPolls != 202 || r.SpawnDelay.MaxOtherPollsTask != 1 {
			t.Errorf("bound %d: %v %v, spawn delay %+v", bound, r.Verdict, r.Err, r.SpawnDelay)
		}
	}
	// Never polled: the executor stopped with the victim still queued.
	ev := pingPong(100, false)
	ev = append(ev, traces.Event{Seq: uint64(len(ev) + 1), Kind: traces.KindStop, Worker: -1, Victim: -1})
	r = run(128, ev)
	if r.Verdict != checker.Violated || !strings.Contains(r.Err.Msg, "t1, ready since its spawn at event 1, waited 202 polls of other tasks and was not polled by the end") {
		t.Fatalf("never polled: %v %v", r.Verdict, r.Err)
	}
	if r := run(0, ev); r.Verdict != checker.Holds || len(r.Abandoned) != 1 {
		t.Errorf("without a bound: %v %v %v", r.Verdict, r.Err, r.Abandoned)
	}
}
