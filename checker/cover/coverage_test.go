package cover

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/checker/explore"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

func covSpace(t *testing.T, c model.Config) *Space {
	t.Helper()
	sp, err := NewSpace(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// mustAdd projects the run evs with header h into cv; an error of Add (the
// trace cannot be projected) fails the test.
func mustAdd(t *testing.T, cv *Coverage, h traces.Header, evs []traces.Event) ProjectResult {
	t.Helper()
	res, err := cv.Add(h, traces.All(evs))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The space has exactly the model checker's counts.
func TestCoverageSpaceCounts(t *testing.T) {
	for _, c := range []model.Config{
		{Workers: 2, Tasks: 3, Pendings: 1, Wakes: 1},
		{Workers: 2, Tasks: 2, Pendings: 2},
		{Policy: model.FIFO, Workers: 2, Tasks: 3, Pendings: 1},
		{Policy: model.TimeSlice, Workers: 1, Tasks: 2, Pendings: 2},
		{Policy: model.Retry, Workers: 2, Tasks: 2, Pendings: 1},
	} {
		sp := covSpace(t, c)
		r, err := explore.Explore(context.Background(), c, explore.Options{Parallel: 1})
		if err != nil {
			t.Fatal(err)
		}
		if int64(sp.States()) != r.States || int64(sp.Transitions()) != r.Transitions {
			t.Errorf("%s: space %d states %d transitions, Explore %d %d", c, sp.States(), sp.Transitions(), r.States, r.Transitions)
		}
	}
	sp := covSpace(t, model.Config{Workers: 2, Tasks: 3, Pendings: 1, Wakes: 1})
	if sp.States() != 1580 || sp.Transitions() != 4971 {
		t.Errorf("W2 T3 K1 wakes=1: %d states, %d transitions; want 1580, 4971", sp.States(), sp.Transitions())
	}
	if sp.ExcludedStates() == 0 || sp.ExcludedStates() >= sp.States() {
		t.Errorf("excluded %d of %d states", sp.ExcludedStates(), sp.States())
	}
	none, err := NewSpace(context.Background(), sp.Config(), Options{Exclusions: []Exclusion{}})
	if err != nil {
		t.Fatal(err)
	}
	if none.ExcludedStates() != 0 || none.ExcludedTransitions() != 0 {
		t.Errorf("no exclusions: %d states, %d transitions excluded", none.ExcludedStates(), none.ExcludedTransitions())
	}
}

// walkTrace walks the closed model at random, taking only instances no
// exclusion applies to, and writes the trace a conforming executor would
// record, with register events. It returns the ids of the states visited.
func walkTrace(t *testing.T, sp *Space, r *rand.Rand, register bool) ([]traces.Event, []int32) {
	t.Helper()
	m := sp.m
	s, next := m.Init(), m.Init()
	buf := make([]uint64, sp.words)
	var evs []traces.Event
	seq := uint64(0)
	emit := func(e traces.Event) {
		seq++
		e.Seq = seq
		if e.Victim == 0 && e.Source != traces.SourceSteal {
			e.Victim = -1
		}
		evs = append(evs, e)
	}
	ids := []int32{0}
	for {
		var steps []model.Step
		m.Next(s, next, func(st model.Step, _ *model.State, err error) bool {
			if err == nil && sp.excludedBy(s, st) < 0 {
				steps = append(steps, st)
			}
			return true
		})
		if len(steps) == 0 {
			break
		}
		st := steps[r.IntN(len(steps))]
		before := s.Clone()
		if err := m.Apply(s, st); err != nil {
			t.Fatal(err)
		}
		id, ok := sp.lookup(s, buf)
		if !ok {
			t.Fatalf("walk left the space")
		}
		ids = append(ids, id)
		tk, w := int64(st.Task), int32(st.Worker)
		switch st.Rule {
		case model.SPAWN:
			emit(traces.Event{Kind: traces.KindSpawn, Task: tk, Worker: -1, Queue: traces.QueueGlobal})
		case model.POLL_LOCAL, model.GLOBAL_STEAL, model.WORKER_STEAL:
			e := traces.Event{Kind: traces.KindTake, Task: tk, Worker: w, Source: traces.SourceLocal, Victim: -1}
			if st.Rule == model.GLOBAL_STEAL {
				e.Source = traces.SourceGlobal
			}
			if st.Rule == model.WORKER_STEAL {
				e.Source, e.Victim = traces.SourceSteal, int32(st.Victim)
			}
			emit(e)
			emit(traces.Event{Kind: traces.KindPollBegin, Task: tk, Worker: w})
		case model.POLL_PENDING:
			if register {
				emit(traces.Event{Kind: traces.KindRegister, Task: tk, Worker: w})
			}
		case model.TASK_SUSPEND:
			emit(traces.Event{Kind: traces.KindPollEnd, Task: tk, Worker: w, Result: traces.ResultPending})
			if before.Task[st.Task-1] == model.Notified {
				emit(traces.Event{Kind: traces.KindRequeue, Task: tk, Worker: w, Queue: queuedOn(s, st.Task, st.Worker)})
			}
		case model.TASK_COMPLETE:
			emit(traces.Event{Kind: traces.KindPollEnd, Task: tk, Worker: w, Result: traces.ResultReady})
		case model.WAKE:
			o := map[string]traces.Outcome{"scheduled": traces.OutcomeScheduled, "notified": traces.OutcomeNotified, "coalesced": traces.OutcomeCoalesced}[model.WakeOutcome(before, st.Task)]
			e := traces.Event{Kind: traces.KindWake, Task: tk, Worker: int32(st.Dest), Outcome: o}
			if o == traces.OutcomeScheduled {
				e.Queue = queuedOn(s, st.Task, st.Dest)
			}
			emit(e)
		}
	}
	return evs, ids
}

// queuedOn says where a push of task t towards dest's local queue (dest < 0:
// the global queue) went: the global queue when t is there (an overflow),
// else dest's local queue.
func queuedOn(s *model.State, t, dest int) traces.Queue {
	if dest < 0 || slices.Contains(s.Global, int32(t)) {
		return traces.QueueGlobal
	}
	return traces.LocalQueue(dest)
}

// Projecting a run of the model itself, with register events, visits
// exactly the states the run went through, and nothing is outside; without
// them, a subset (a registration is seen only at the wake or the poll-end
// that follows it).
func TestCoverageProjectsModelRuns(t *testing.T) {
	c := model.Config{Workers: 2, Tasks: 3, Pendings: 1, Wakes: 2}
	sp := covSpace(t, c)
	h := explore.HeaderOf(sp.Config())
	r := rand.New(rand.NewPCG(1, 2))
	unreg := New(sp)
	walked := map[int32]bool{}
	for i := range 100 {
		evs, ids := walkTrace(t, sp, r, false)
		res, err := unreg.Add(h, traces.All(evs))
		if err != nil || res.Err != nil || res.Left != "" {
			t.Fatalf("run %d without register events: %v %v %q", i, err, res.Err, res.Left)
		}
		for _, id := range ids {
			walked[id] = true
		}
	}
	// Without register events a registration is placed just before the
	// wake or poll-end that shows it, so the states differ from the walk's
	// (an equivalent order of the same run); what must hold is that every
	// run projects, and onto no more states than it has events.
	if v := unreg.Report(0).VisitedStates; v == 0 || v > len(walked)*2 {
		t.Fatalf("without register events: %d states visited, %d walked", v, len(walked))
	}
	cv := New(sp)
	want := map[int32]bool{}
	for i := range 300 {
		evs, ids := walkTrace(t, sp, r, true)
		res := mustAdd(t, cv, h, evs)
		if res.Err != nil || res.Left != "" {
			t.Fatalf("run %d: err %v, left %q\n%v", i, res.Err, res.Left, evs)
		}
		for _, id := range ids {
			want[id] = true
		}
	}
	rep := cv.Report(5)
	if rep.VisitedStates != len(want) || rep.Outside != 0 {
		t.Fatalf("visited %d states, the walks went through %d; outside %d", rep.VisitedStates, len(want), rep.Outside)
	}
	for id := range want {
		if !cv.Visited(int(id)) {
			t.Fatalf("state %d walked, not visited", id)
		}
	}
	var fired int64
	for _, v := range rep.Variants {
		fired += v.Fired
	}
	if fired == 0 || rep.VisitedTransitions == 0 || len(rep.Unvisited) == 0 {
		t.Fatalf("report: %+v", rep)
	}
	t.Logf("\n%s", rep)
	// Every transition the executor can take and never took is in one
	// group of unvisited transitions, and each group is of one variant.
	all := cv.Report(0)
	n := 0
	for _, c := range all.UnvisitedTransitions {
		n += c.States
		if v, _, ok := strings.Cut(c.Class, " from: "); !ok || !slices.ContainsFunc(all.Variants, func(x VariantCount) bool { return x.Variant == v }) {
			t.Errorf("group %q names no rule variant", c.Class)
		}
	}
	if want := all.ModelTransitions - all.ExcludedTransitions - all.VisitedTransitions; n != want || want == 0 {
		t.Errorf("unvisited transitions in groups: %d, want %d", n, want)
	}
}

// A run that conforms to the open model but reaches a state no closed run
// reaches is a failure: here a steal accepted under the relaxed premise
// "global = ∅ at some instant since the thief looked".
func TestCoverageOutsideIsAFailure(t *testing.T) {
	sp := covSpace(t, model.Config{Workers: 2, Tasks: 2, Pendings: 1, Wakes: 1})
	h := explore.HeaderOf(sp.Config())
	evs := []traces.Event{
		{Seq: 1, Kind: traces.KindSpawn, Task: 1, Worker: -1, Queue: traces.QueueGlobal},
		{Seq: 2, Kind: traces.KindTake, Task: 1, Worker: 0, Source: traces.SourceGlobal},
		{Seq: 3, Kind: traces.KindPollBegin, Task: 1, Worker: 0},
		{Seq: 4, Kind: traces.KindRegister, Task: 1, Worker: 0},
		{Seq: 5, Kind: traces.KindWake, Task: 1, Worker: 0, Outcome: traces.OutcomeNotified},
		{Seq: 6, Kind: traces.KindPollEnd, Task: 1, Worker: 0, Result: traces.ResultPending},
		{Seq: 7, Kind: traces.KindRequeue, Task: 1, Worker: 0, Queue: traces.LocalQueue(0)},
		{Seq: 8, Kind: traces.KindSpawn, Task: 2, Worker: -1, Queue: traces.QueueGlobal},
		{Seq: 10, Call: 7, Kind: traces.KindTake, Task: 1, Worker: 1, Source: traces.SourceSteal, Victim: 0},
	}
	for i := range evs {
		if evs[i].Source != traces.SourceSteal {
			evs[i].Victim = -1
		}
	}
	cv := New(sp)
	res := mustAdd(t, cv, h, evs)
	var out *OutsideError
	if oe, ok := res.Err.(*OutsideError); ok {
		out = oe
	}
	if out == nil || out.Index != 8 {
		t.Fatalf("want an outside error at event 9, got %v (left %q)", res.Err, res.Left)
	}
	if rep := cv.Report(0); rep.Outside != 1 || len(rep.Failures) != 1 {
		t.Fatalf("report counts %d outside", rep.Outside)
	}
	// The register event made NOTIFIED-with-registration visible.
	if res.NewStates != 6 {
		t.Fatalf("%d new states, want 6", res.NewStates)
	}

	// A second wake of a registration budgeted for one leaves the
	// configuration: not a failure.
	evs2 := slices.Clone(evs[:6])
	evs2[4] = traces.Event{Seq: 5, Kind: traces.KindWake, Task: 1, Worker: -1, Outcome: traces.OutcomeNotified, Victim: -1}
	evs2 = append(evs2, traces.Event{Seq: 7, Kind: traces.KindWake, Task: 1, Worker: -1, Outcome: traces.OutcomeCoalesced, Victim: -1})
	// (evs2[5] is the poll-end; move it after the second wake)
	evs2[5], evs2[6] = evs2[6], evs2[5]
	evs2[5].Seq, evs2[6].Seq = 6, 7
	res = mustAdd(t, cv, h, evs2)
	if res.Err != nil || !strings.Contains(res.Left, "no wake left") {
		t.Fatalf("want the run to leave the configuration, got err %v, left %q", res.Err, res.Left)
	}
}

// A violation of the open model is a failure of the run.
func TestCoverageConformanceViolation(t *testing.T) {
	sp := covSpace(t, model.Config{Workers: 1, Tasks: 1, Pendings: 1})
	h := explore.HeaderOf(sp.Config())
	evs := []traces.Event{
		{Seq: 1, Kind: traces.KindSpawn, Task: 1, Worker: -1, Queue: traces.QueueGlobal, Victim: -1},
		{Seq: 2, Kind: traces.KindTake, Task: 1, Worker: 0, Source: traces.SourceGlobal, Victim: -1},
		{Seq: 3, Kind: traces.KindRegister, Task: 1, Worker: 0, Victim: -1},
		{Seq: 4, Kind: traces.KindPollEnd, Task: 1, Worker: 0, Result: traces.ResultReady, Victim: -1},
	}
	cv := New(sp)
	res := mustAdd(t, cv, h, evs)
	ce, ok := res.Err.(*conform.Error)
	if !ok || ce.Rule != model.TASK_COMPLETE {
		t.Fatalf("want TASK-COMPLETE's violation, got %v", res.Err)
	}
}

// Path leads to its state, through no excluded step, in Depth steps or
// more (the breadth-first search without excluded steps may be longer).
func TestCoveragePath(t *testing.T) {
	sp := covSpace(t, model.Config{Workers: 2, Tasks: 3, Pendings: 1, Wakes: 1})
	buf := make([]uint64, sp.words)
	for id := 1; id < sp.States(); id++ {
		p := sp.Path(id)
		if sp.Excluded(id) {
			if p != nil {
				t.Fatalf("state %d is excluded and has a path", id)
			}
			continue
		}
		s := sp.m.Init()
		for _, st := range p {
			if sp.excludedBy(s, st) >= 0 {
				t.Fatalf("path to %d takes the excluded %s", id, st)
			}
			if err := sp.m.Apply(s, st); err != nil {
				t.Fatalf("path to %d: %v", id, err)
			}
		}
		if got, ok := sp.lookup(s, buf); !ok || int(got) != id || len(p) < sp.Depth(id) {
			t.Fatalf("path to %d ends in %d after %d steps (depth %d)", id, got, len(p), sp.Depth(id))
		}
	}
}
