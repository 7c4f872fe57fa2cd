package conform

import (
	"math/rand/v2"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/internal/cputime"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// confGen generates a random trace that a correct executor could record: at
// each step it picks an event the model enables in the current state (read
// from a Conformance that follows along), so the trace conforms by
// construction. It drives the tests that random correct traces conform and
// that mutated ones are caught, and the benchmark.
type confGen struct {
	c      *Conformance
	rng    *rand.Rand
	seq    uint64
	next   int64 // last task id spawned
	lo     int64 // tasks 1..lo are DONE
	done   int
	live   int // tasks spawned and not DONE, bound
	events []traces.Event
	notify bool // the time-slice policy: the next poll-end decides a re-poll
}

func newConfGen(t testing.TB, h traces.Header, seed uint64) *confGen {
	c, err := New(h)
	if err != nil {
		t.Fatal(err)
	}
	return &confGen{c: c, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), live: 48}
}

func (g *confGen) emit(t testing.TB, e traces.Event) {
	g.seq++
	e.Seq = g.seq
	if e.Victim == 0 && e.Source != traces.SourceSteal {
		e.Victim = -1
	}
	if err := g.c.Step(e); err != nil {
		t.Fatalf("generator produced a violation: %v\n%s", err, g.c.fr.Err.State)
	}
	g.events = append(g.events, e)
}

// run generates at least n events, then lets every task finish.
func (g *confGen) run(t testing.TB, n int) []traces.Event {
	s := g.c.s
	W := len(s.Cur)
	for len(g.events) < n {
		switch r := g.rng.IntN(10); {
		case r < 2 && int(g.next)-g.done < g.live:
			g.spawn(t, -1)
		case r < 3:
			g.wakeRandom(t)
		default:
			g.worker(t, g.rng.IntN(W), true)
		}
	}
	// Drain: no more spawns or pending results; wake the waiting.
	for g.done < int(g.next) {
		for i, st := range s.Task {
			if st == model.Waiting {
				g.emit(t, traces.Event{Kind: traces.KindWake, Task: int64(i + 1), Worker: -1, Outcome: traces.OutcomeScheduled, Queue: traces.QueueGlobal})
			}
		}
		for w := 0; w < W; w++ {
			g.worker(t, w, false)
		}
	}
	return g.events
}

func (g *confGen) spawn(t testing.TB, w int) {
	g.next++
	q := traces.QueueGlobal
	if w >= 0 && g.localRoom(w) {
		q = traces.LocalQueue(w)
	}
	g.emit(t, traces.Event{Kind: traces.KindSpawn, Task: g.next, Worker: int32(w), Queue: q})
}

// wakeRandom wakes one of the recent tasks, from outside or from a worker
// that is polling, with the outcome the model gives.
func (g *confGen) wakeRandom(t testing.TB) {
	if g.next == 0 {
		return
	}
	s := g.c.s
	for g.lo < g.next && s.Task[g.lo] == model.Done {
		g.lo++ // tasks 1..lo are DONE
	}
	lo := max(g.lo+1, g.next-64)
	if g.rng.IntN(4) == 0 {
		lo = g.lo + 1 // now and then the oldest live tasks
	}
	lo = min(lo, g.next)
	task := lo + g.rng.Int64N(g.next-lo+1)
	for try := 0; try < 4 && s.Task[task-1] != model.Waiting; try++ {
		task = lo + g.rng.Int64N(g.next-lo+1) // mostly wake tasks that wait
	}
	w := -1
	if v := g.rng.IntN(len(s.Cur) + 1); v < len(s.Cur) && s.Cur[v] != 0 {
		w = v
	}
	out, err := traces.ParseOutcome(model.WakeOutcome(s, int(task)))
	if err != nil {
		t.Fatal(err)
	}
	e := traces.Event{Kind: traces.KindWake, Task: task, Worker: int32(w), Outcome: out}
	if out == traces.OutcomeScheduled {
		e.Queue = traces.QueueGlobal
		if w >= 0 && g.localRoom(w) {
			e.Queue = traces.LocalQueue(w)
		}
	}
	g.emit(t, e)
}

// worker makes worker w take a step: an idle worker takes the task the
// rules give it, a polling one spawns, wakes, or ends its poll.
func (g *confGen) worker(t testing.TB, w int, pending bool) {
	s := g.c.s
	if cur := s.Cur[w]; cur != 0 {
		task := int64(cur)
		switch r := g.rng.IntN(10); {
		case pending && r < 1 && int(g.next)-g.done < g.live:
			g.spawn(t, w)
		case pending && r < 2:
			out := traces.OutcomeNotified
			if s.Task[cur-1] == model.Notified {
				out = traces.OutcomeCoalesced
			}
			g.emit(t, traces.Event{Kind: traces.KindWake, Task: task, Worker: int32(w), Outcome: out})
		case pending && r < 6 && s.Task[cur-1] == model.Running:
			g.emit(t, traces.Event{Kind: traces.KindPollEnd, Task: task, Worker: int32(w), Result: traces.ResultPending})
		default:
			if s.Task[cur-1] == model.Notified && pending {
				g.emit(t, traces.Event{Kind: traces.KindPollEnd, Task: task, Worker: int32(w), Result: traces.ResultPending})
				if g.c.slices {
					// Re-poll if the slice allows, else re-queue (a
					// single-queue policy: on the global queue).
					if int(s.Slice[w]) < g.c.m.Config().Slice {
						g.emit(t, traces.Event{Kind: traces.KindPollBegin, Task: task, Worker: int32(w)})
					} else {
						g.emit(t, traces.Event{Kind: traces.KindRequeue, Task: task, Worker: int32(w), Queue: traces.QueueGlobal})
					}
					return
				}
				g.emit(t, traces.Event{Kind: traces.KindRequeue, Task: task, Worker: int32(w), Queue: g.c.slot(&g.c.tasks[cur-1]).requeue})
				return
			}
			g.emit(t, traces.Event{Kind: traces.KindPollEnd, Task: task, Worker: int32(w), Result: traces.ResultReady})
			g.done++
		}
		return
	}
	e := traces.Event{Kind: traces.KindTake, Worker: int32(w), Call: g.seq + 1}
	local := g.unslotted(w)
	slot := g.c.workers[w].slot
	gi := g.c.m.Config().GlobalInterval
	switch {
	case gi > 0 && int(s.Tick[w]) == gi-1 && len(s.Global) > 0:
		e.Source = traces.SourceGlobal // the global-check interval came round
		e.Task = int64(s.Global[0])
	case slot != 0 && (len(local) == 0 || g.rng.IntN(2) == 0):
		e.Source, e.Task = traces.SourceLIFO, int64(slot)
	case len(local) > 0:
		e.Source = traces.SourceLocal
		e.Task = int64(local[len(local)-1])
		if g.c.m.Config().OwnerFIFO {
			e.Task = int64(local[0])
		}
	case len(s.Global) > 0:
		e.Source = traces.SourceGlobal
		e.Task = int64(s.Global[0])
	default:
		v := g.rng.IntN(len(s.Cur))
		for i := range s.Cur {
			if u := (v + i) % len(s.Cur); u != w && len(g.unslotted(u)) > 0 {
				e.Source, e.Victim, e.Task = traces.SourceSteal, int32(u), int64(g.unslotted(u)[0])
				break
			}
		}
		if e.Task == 0 {
			return
		}
	}
	g.emit(t, e)
	g.emit(t, traces.Event{Kind: traces.KindPollBegin, Task: e.Task, Worker: int32(w)})
}

// localRoom reports whether a spawn or wake on worker w goes to its local
// queue: into the empty LIFO slot, or onto a local queue that is not full.
func (g *confGen) localRoom(w int) bool {
	if g.c.cap == 0 {
		return false
	}
	if g.c.slotOn && g.c.workers[w].slot == 0 {
		return true
	}
	return len(g.unslotted(w)) < g.c.capacity()
}

// unslotted returns w's local queue without the task in its LIFO slot
// (which the checker keeps at the tail).
func (g *confGen) unslotted(w int) []int32 {
	q := g.c.s.Local[w]
	if g.c.workers[w].slot != 0 {
		q = q[:len(q)-1]
	}
	return q
}

func TestConformanceGenerated(t *testing.T) {
	headers := []traces.Header{
		hdr(1, "fifo", nil),
		hdr(3, "fifo", nil),
		hdr(2, "worksteal", map[string]int{"local-cap": 4}),
		hdr(4, "worksteal", map[string]int{"local-cap": 2, "owner-lifo": 0, "steal-half": 1}),
		hdr(3, "worksteal", map[string]int{"local-cap": 1, "lifo-slot": 1, "global-interval": 2}),
		hdr(2, "worksteal", map[string]int{"local-cap": 2, "lifo-slot": 1, "owner-lifo": 0, "steal-half": 1}),
		hdr(2, "timeslice", map[string]int{"slice": 2}),
	}
	for _, h := range headers {
		for seed := range uint64(5) {
			g := newConfGen(t, h, seed)
			events := g.run(t, 3000)
			r := checkEvents(t, h, events)
			if r.Verdict != checker.Holds {
				t.Fatalf("%s %v seed %d: verdict %s\n%s", h.Policy, h.Config, seed, r.Verdict, r.Summary())
			}
		}
	}
}

// Mutations of a correct trace that break a rule are caught: dropping a
// wake, duplicating a take, turning a wake's outcome, moving a push.
func TestConformanceMutated(t *testing.T) {
	h := hdr(3, "worksteal", map[string]int{"local-cap": 3})
	g := newConfGen(t, h, 42)
	events := g.run(t, 4000)
	type mutation struct {
		name  string
		match func(e traces.Event) bool
		apply func(events []traces.Event, i int) []traces.Event
	}
	mutations := []mutation{
		{"take twice", func(e traces.Event) bool { return e.Kind == traces.KindTake }, func(ev []traces.Event, i int) []traces.Event {
			dup := ev[i]
			dup.Worker = (dup.Worker + 1) % 3
			dup.Source = traces.SourceGlobal
			return append(ev[:i+1:i+1], append([]traces.Event{dup}, ev[i+1:]...)...)
		}},
		{"scheduled reported coalesced", func(e traces.Event) bool {
			return e.Kind == traces.KindWake && e.Outcome == traces.OutcomeScheduled
		}, func(ev []traces.Event, i int) []traces.Event {
			ev[i].Outcome, ev[i].Queue = traces.OutcomeCoalesced, traces.QueueNone
			return ev
		}},
		{"notified reported coalesced", func(e traces.Event) bool {
			return e.Kind == traces.KindWake && e.Outcome == traces.OutcomeNotified
		}, func(ev []traces.Event, i int) []traces.Event {
			ev[i].Outcome = traces.OutcomeCoalesced
			return ev
		}},
		{"coalesced reported scheduled", func(e traces.Event) bool {
			return e.Kind == traces.KindWake && e.Outcome == traces.OutcomeCoalesced
		}, func(ev []traces.Event, i int) []traces.Event {
			ev[i].Outcome, ev[i].Queue = traces.OutcomeScheduled, traces.QueueGlobal
			return ev
		}},
		{"ready then polled", func(e traces.Event) bool {
			return e.Kind == traces.KindPollEnd && e.Result == traces.ResultReady
		}, func(ev []traces.Event, i int) []traces.Event {
			again := traces.Event{Kind: traces.KindPollBegin, Task: ev[i].Task, Worker: ev[i].Worker, Victim: -1, Seq: ev[i].Seq}
			return append(ev[:i+1:i+1], append([]traces.Event{again}, ev[i+1:]...)...)
		}},
		{"local push sent to another worker", func(e traces.Event) bool {
			return e.Kind == traces.KindSpawn && e.Queue.Worker() >= 0
		}, func(ev []traces.Event, i int) []traces.Event {
			ev[i].Queue = traces.LocalQueue((ev[i].Queue.Worker() + 1) % 3)
			return ev
		}},
		{"a take dropped", func(e traces.Event) bool { return e.Kind == traces.KindTake }, func(ev []traces.Event, i int) []traces.Event {
			return append(ev[:i:i], ev[i+1:]...)
		}},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			found := 0
			for i := 0; i < len(events) && found < 20; i++ {
				if !m.match(events[i]) {
					continue
				}
				found++
				ev := m.apply(append([]traces.Event(nil), events...), i)
				r := checkEvents(t, h, ev)
				if r.Verdict != checker.Violated {
					t.Fatalf("mutation at event %d not caught: %s\n%s", i, r.Verdict, r.Summary())
				}
			}
			if found == 0 {
				t.Fatal("no event to mutate")
			}
		})
	}
}

var benchSink *Report

// BenchmarkConformance checks an in-memory trace of about 1e6 events from a
// random correct run per iteration; events/s is the figure the goal (5e6 per
// second on one core) is about.
func BenchmarkConformance(b *testing.B) {
	for _, h := range []traces.Header{
		hdr(4, "worksteal", map[string]int{"local-cap": 256, "global-interval": 0}),
		hdr(2, "fifo", nil),
	} {
		b.Run(h.Policy, func(b *testing.B) {
			g := newConfGen(b, h, 1)
			events := g.run(b, 1_000_000)
			cpu0 := cputime.Process()
			b.ResetTimer()
			for b.Loop() {
				c, _ := New(h)
				for _, e := range events {
					if err := c.Step(e); err != nil {
						b.Fatal(err)
					}
				}
				benchSink = c.Finish()
			}
			b.ReportMetric(float64(len(events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
			// CPU time, unlike wall time, does not count the time other
			// processes held the core: the figure to compare on a shared
			// machine.
			b.ReportMetric(float64(len(events))*float64(b.N)/(cputime.Process()-cpu0).Seconds(), "events/cpu-s")
		})
	}
}
