package conform_test

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/traces"
)

// ivSim simulates a lock-free work-stealing executor, goroutine-free: W
// workers and P outside threads, a FIFO global queue and a deque per worker
// (owner end LIFO or FIFO, thieves at the head). Every queue operation has a
// call tick, a linearization point at a later step (where it takes effect on
// the real queues), and a ret tick, all from one clock, and the threads'
// steps are interleaved at random. Events carry the contract's seq: call for
// a push, ret for a take, the tick itself for poll-begin and poll-end.
type ivSim struct {
	rng       *rand.Rand
	clock     uint64
	W, P      int
	fifoOwner bool
	atomic    bool // every operation runs in one step: no overlap
	tasks     int  // outside pushes per outside thread
	children  int  // budget of tasks spawned by workers

	global  []int64
	local   [][]int64
	pushC   map[int64]uint64
	pushR   map[int64]uint64
	next    int64
	threads []*ivThread
	events  []traces.Event

	mut     ivMutant
	applied bool
	mutSeq  uint64 // seq of the take the mutant is about (fifo, owed)
	drop    int64  // task whose spawn event the trace loses
}

type ivMutant int

const (
	mutNone        ivMutant = iota
	mutDup                  // a take leaves its task in the queue: taken twice
	mutLost                 // a push records its event but never lands
	mutStealOwn             // a steal while the thief's own local queue holds work
	mutFIFO                 // a take of the second task between non-overlapping pushes
	mutNeverPushed          // a take of a task whose push is not in the trace
	mutOwedNever            // a take of the second task; the first vanishes
)

var ivMutants = []struct {
	name string
	m    ivMutant
}{{"taken twice", mutDup}, {"lost", mutLost}, {"steal with own work", mutStealOwn}, {"fifo order", mutFIFO}, {"never pushed", mutNeverPushed}, {"obligation never met", mutOwedNever}}

type ivThread struct {
	w      int // worker, or -1
	stage  int
	inOp   bool
	call   uint64
	task   int64
	left   int // pushes left (outside thread)
	looks  []int
	look   int // index into looks: -2 own local, -1 global, v victim
	got    int64
	src    traces.Source
	victim int
	dest   traces.Queue
	done   bool
}

func (s *ivSim) tick() uint64 { s.clock++; return s.clock }

func (s *ivSim) emit(e traces.Event) {
	if e.Kind == traces.KindSpawn && e.Task == s.drop {
		return
	}
	s.events = append(s.events, e)
}

func newIVSim(seed uint64, m ivMutant) *ivSim {
	r := rand.New(rand.NewPCG(seed, 0x16b))
	s := &ivSim{rng: r, W: 2 + r.IntN(3), P: 1 + r.IntN(2), fifoOwner: r.IntN(2) == 0, tasks: 8 + r.IntN(12), children: 10 + r.IntN(20), mut: m,
		pushC: map[int64]uint64{}, pushR: map[int64]uint64{}}
	s.local = make([][]int64, s.W)
	for w := range s.W {
		s.threads = append(s.threads, &ivThread{w: w})
	}
	for range s.P {
		s.threads = append(s.threads, &ivThread{w: -1, left: s.tasks})
	}
	if m == mutNeverPushed {
		s.drop = 3
	}
	return s
}

func (s *ivSim) header() traces.Header {
	lifo := 1
	if s.fifoOwner {
		lifo = 0
	}
	return traces.Header{Format: traces.Format, Version: traces.Version, Minor: 1, Order: traces.OrderIntervals,
		Executor: "ivsim", Workers: s.W, Policy: "worksteal", Config: map[string]int{"owner-lifo": lifo}}
}

func (s *ivSim) othersInOp(me *ivThread) bool {
	for _, t := range s.threads {
		if t != me && t.inOp {
			return true
		}
	}
	return false
}

func (s *ivSim) run() {
	for steps, limit := 0, 1_000_000+1000*(s.P*s.tasks+s.children); steps < limit; steps++ {
		if s.finished() {
			break
		}
		th := s.threads[s.rng.IntN(len(s.threads))]
		if th.done {
			continue
		}
		for {
			s.step(th)
			if !s.atomic || !th.inOp {
				break
			}
		}
	}
	slices.SortFunc(s.events, func(a, b traces.Event) int { return int(a.Seq) - int(b.Seq) })
}

func (s *ivSim) finished() bool {
	for _, th := range s.threads {
		if th.w < 0 && !th.done || th.inOp || th.got != 0 {
			return false
		}
	}
	return queuesEmpty(s.global, s.local)
}

// push runs one step of a push of th.task onto th.dest.
func (s *ivSim) push(th *ivThread) bool {
	switch th.stage {
	case 0:
		th.inOp, th.call = true, s.tick()
		th.stage = 1
	case 1:
		s.tick()
		if !(s.mut == mutLost && !s.applied && th.w < 0 && s.clock > 40) {
			if th.dest == traces.QueueGlobal {
				s.global = append(s.global, th.task)
			} else {
				s.local[th.w] = append(s.local[th.w], th.task)
			}
		} else {
			s.applied = true
		}
		th.stage = 2
	case 2:
		ret := s.tick()
		s.pushC[th.task], s.pushR[th.task] = th.call, ret
		s.emit(traces.Event{Kind: traces.KindSpawn, Seq: th.call, Call: th.call, Return: ret, Task: th.task, Worker: int32(th.w), Victim: -1, Queue: th.dest})
		th.inOp, th.stage = false, 0
		return true
	}
	return false
}

func (s *ivSim) step(th *ivThread) {
	if th.w < 0 {
		if th.stage == 0 {
			if th.left == 0 {
				th.done = true
				return
			}
			s.next++
			th.task, th.dest = s.next, traces.QueueGlobal
			th.left--
		}
		s.push(th)
		return
	}
	w := th.w
	switch {
	case th.got == 0 && th.stage == 0:
		// Begin a look: own local, global, then victims in random order.
		if th.looks == nil {
			th.looks = append(th.looks, -2, -1)
			for _, v := range s.rng.Perm(s.W) {
				if v != w {
					th.looks = append(th.looks, v)
				}
			}
			th.look = 0
		}
		if s.mutate(th) {
			return
		}
		th.inOp, th.call = true, s.tick()
		th.stage = 1
	case th.got == 0 && th.stage == 1:
		s.tick()
		var t int64
		switch l := th.looks[th.look]; l {
		case -2:
			if q := s.local[w]; len(q) > 0 {
				if s.fifoOwner {
					t, s.local[w] = q[0], q[1:]
				} else {
					t, s.local[w] = q[len(q)-1], q[:len(q)-1]
				}
				th.src = traces.SourceLocal
			}
		case -1:
			if len(s.global) > 0 {
				t = s.global[0]
				if s.mut == mutDup && !s.applied && s.clock > 40 {
					s.applied = true
				} else {
					s.global = s.global[1:]
				}
				th.src = traces.SourceGlobal
			}
		default:
			if q := s.local[l]; len(q) > 0 {
				t, s.local[l] = q[0], q[1:]
				th.src, th.victim = traces.SourceSteal, l
			}
		}
		th.task = t
		th.stage = 2
	case th.got == 0 && th.stage == 2:
		ret := s.tick()
		th.inOp, th.stage = false, 0
		if th.task == 0 {
			th.look++
			if th.look == len(th.looks) {
				th.looks = nil
			}
			return
		}
		s.emitTake(th, th.call, ret)
	case th.got != 0 && th.stage == 0:
		seq := s.tick()
		s.emit(traces.Event{Kind: traces.KindPollBegin, Seq: seq, Task: th.got, Worker: int32(w), Victim: -1})
		th.stage = 10
	case th.got != 0 && th.stage == 10:
		if s.children > 0 && s.rng.IntN(3) == 0 {
			s.children--
			s.next++
			th.task, th.dest = s.next, traces.LocalQueue(w)
			if len(s.local[w]) > 64 {
				th.dest = traces.QueueGlobal
			}
			th.stage = 20
			return
		}
		seq := s.tick()
		s.emit(traces.Event{Kind: traces.KindPollEnd, Seq: seq, Task: th.got, Worker: int32(w), Victim: -1, Result: traces.ResultReady})
		th.got, th.stage = 0, 0
	case th.got != 0 && th.stage >= 20:
		th.stage -= 20
		if s.push(th) {
			th.stage = 10
		} else {
			th.stage += 20
		}
	}
}

func (s *ivSim) emitTake(th *ivThread, call, ret uint64) {
	e := traces.Event{Kind: traces.KindTake, Seq: ret, Call: call, Return: ret, Task: th.task, Worker: int32(th.w), Victim: -1, Source: th.src}
	if th.src == traces.SourceSteal {
		e.Victim = int32(th.victim)
	}
	s.emit(e)
	th.got, th.task, th.looks = th.task, 0, nil
}

// mutate applies an atomic mutant operation for worker th when its moment
// has come: no other operation in flight, so none overlaps it.
func (s *ivSim) mutate(th *ivThread) bool {
	if s.applied || s.clock < 40 || s.othersInOp(th) {
		return false
	}
	w := th.w
	switch s.mut {
	case mutStealOwn:
		if len(s.local[w]) == 0 {
			return false
		}
		for v := range s.W {
			if q := s.local[v]; v != w && len(q) > 0 {
				call := s.tick()
				th.task, s.local[v] = q[0], q[1:]
				th.src, th.victim = traces.SourceSteal, v
				s.tick()
				s.applied = true
				s.emitTake(th, call, s.tick())
				return true
			}
		}
	case mutFIFO, mutOwedNever:
		g := s.global
		if len(s.local[w]) > 0 || len(g) < 2 || s.pushR[g[0]] > s.pushC[g[1]] {
			return false
		}
		call := s.tick()
		th.task, th.src = g[1], traces.SourceGlobal
		if s.mut == mutOwedNever {
			s.global = g[2:]
		} else {
			s.global = append([]int64{g[0]}, g[2:]...)
		}
		s.tick()
		ret := s.tick()
		s.applied, s.mutSeq = true, ret
		s.emitTake(th, call, ret)
		return true
	}
	return false
}

func ivCheck(h traces.Header, evs []traces.Event) *conform.Report {
	c, err := conform.New(h)
	if err != nil {
		panic(err)
	}
	for _, e := range evs {
		if c.Step(e) != nil {
			break
		}
	}
	return c.Finish()
}

// ivWant checks that report r of case name has a violation at event index
// want, or none when want is -1, and reports whether it is so.
func ivWant(t *testing.T, name string, r *conform.Report, want int) bool {
	t.Helper()
	switch {
	case want < 0 && r.Err != nil:
		t.Errorf("%s: %s", name, r.Err.Msg)
	case want >= 0 && (r.Err == nil || r.Err.Index != want):
		t.Errorf("%s: want a violation at event %d, got %v", name, want+1, r.Err)
	default:
		return true
	}
	return false
}

func ivSeeds() int {
	if os.Getenv("EXECSPEC_LONG") == "1" {
		return 5000
	}
	return 300
}

// TestIntervalSimNoFalseAlarm: a correct lock-free executor's traces
// conform under order "intervals", while the same traces read in seq order
// (the checker before order intervals) give false alarms.
func TestIntervalSimNoFalseAlarm(t *testing.T) {
	n := ivSeeds()
	seqAlarms, reordered, events := 0, 0, 0
	for seed := range uint64(n) {
		s := newIVSim(seed, mutNone)
		s.run()
		h := s.header()
		r := ivCheck(h, s.events)
		if r.Verdict != checker.Holds {
			t.Fatalf("seed %d: a correct lock-free executor is flagged: %s", seed, r.Summary())
		}
		reordered += r.Reordered
		events += r.Events
		h.Order = ""
		if ivCheck(h, s.events).Verdict != checker.Holds {
			seqAlarms++
		}
	}
	t.Logf("%d traces, %d events: 0 alarms with order intervals (%d takes reordered); %d traces (%.0f%%) flagged when read in seq order",
		n, events, reordered, seqAlarms, 100*float64(seqAlarms)/float64(n))
	if seqAlarms == 0 || reordered == 0 {
		t.Fatalf("the simulator produced no overlap that seq order rejects: the test has no teeth")
	}
}

// TestIntervalSimAtomicSeq: with no overlap the traces conform in both modes.
func TestIntervalSimAtomicSeq(t *testing.T) {
	for seed := range uint64(50) {
		s := newIVSim(seed, mutNone)
		s.atomic = true
		s.run()
		h := s.header()
		if r := ivCheck(h, s.events); r.Verdict != checker.Holds || r.Reordered != 0 {
			t.Fatalf("seed %d: intervals: %s (reordered %d)", seed, r.Summary(), r.Reordered)
		}
		h.Order = ""
		if r := ivCheck(h, s.events); r.Verdict != checker.Holds {
			t.Fatalf("seed %d: seq: %s", seed, r.Summary())
		}
	}
}

// TestIntervalSimMutants: every defect is caught in every trace where the
// simulator could plant it.
func TestIntervalSimMutants(t *testing.T) {
	n := ivSeeds()
	for _, m := range ivMutants {
		t.Run(strings.ReplaceAll(m.name, " ", "-"), func(t *testing.T) {
			applied := 0
			for seed := range uint64(n) {
				s := newIVSim(seed, m.m)
				s.run()
				if m.m == mutNeverPushed {
					s.applied = true
				}
				if !s.applied {
					continue
				}
				applied++
				r := ivCheck(s.header(), s.events)
				if r.Verdict == checker.Holds {
					t.Fatalf("seed %d: %s not caught", seed, m.name)
				}
				if m.m != mutLost && r.Verdict != checker.Violated {
					t.Fatalf("seed %d: %s: verdict %v, want violated: %s", seed, m.name, r.Verdict, r.Summary())
				}
				if m.m == mutFIFO || m.m == mutOwedNever {
					if r.Err.Event.Kind != traces.KindTake || r.Err.Event.Seq != s.mutSeq {
						t.Fatalf("seed %d: %s reported at %s, want the take at seq %d", seed, m.name, r.Err.Msg, s.mutSeq)
					}
				}
				if seed == 0 || applied == 1 {
					t.Logf("%s", r.Err.Msg)
				}
			}
			t.Logf("%s: planted in %d of %d traces, caught in all", m.name, applied, n)
			if applied < n/10 {
				t.Fatalf("planted in only %d of %d traces", applied, n)
			}
		})
	}
}

// FuzzIntervalSim: the simulator's correct executor conforms under order
// intervals for any seed.
func FuzzIntervalSim(f *testing.F) {
	f.Add(uint64(1))
	f.Fuzz(func(t *testing.T, seed uint64) {
		s := newIVSim(seed, mutNone)
		s.run()
		if r := ivCheck(s.header(), s.events); r.Verdict != checker.Holds {
			t.Fatalf("seed %d: %s", seed, r.Summary())
		}
	})
}

func ivBenchTrace(atomic bool) (traces.Header, []traces.Event) {
	s := newIVSim(7, mutNone)
	s.W, s.P, s.tasks, s.children, s.atomic = 4, 2, 20000, 40000, atomic
	s.local = make([][]int64, s.W)
	s.threads = nil
	for w := range s.W {
		s.threads = append(s.threads, &ivThread{w: w})
	}
	for range s.P {
		s.threads = append(s.threads, &ivThread{w: -1, left: s.tasks})
	}
	s.run()
	return s.header(), s.events
}

// BenchmarkConformanceIntervals compares, side by side, seq mode and
// intervals mode on one trace without overlap (both accept it), and
// intervals mode on a trace of overlapping operations.
func BenchmarkConformanceIntervals(b *testing.B) {
	ha, atomicEvs := ivBenchTrace(true)
	hc, concEvs := ivBenchTrace(false)
	run := func(b *testing.B, h traces.Header, evs []traces.Event) {
		for b.Loop() {
			if r := ivCheck(h, evs); r.Verdict != checker.Holds {
				b.Fatal(r.Summary())
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
	}
	hs := ha
	hs.Order = ""
	b.Run("seq/no-overlap", func(b *testing.B) { run(b, hs, atomicEvs) })
	b.Run("intervals/no-overlap", func(b *testing.B) { run(b, ha, atomicEvs) })
	b.Run("intervals/overlap", func(b *testing.B) { run(b, hc, concEvs) })
}

// TestIntervalCases: the named cases of lock-free recording, by hand.
func TestIntervalCases(t *testing.T) {
	h := traces.Header{Format: traces.Format, Version: traces.Version, Minor: 1, Order: traces.OrderIntervals, Executor: "cases", Workers: 2, Policy: "worksteal"}
	push := func(task int64, call, ret uint64) traces.Event {
		return traces.Event{Kind: traces.KindSpawn, Seq: call, Call: call, Return: ret, Task: task, Worker: -1, Victim: -1, Queue: traces.QueueGlobal}
	}
	take := func(w int32, task int64, call, ret uint64) traces.Event {
		return traces.Event{Kind: traces.KindTake, Seq: ret, Call: call, Return: ret, Task: task, Worker: w, Victim: -1, Source: traces.SourceGlobal}
	}
	for _, c := range []struct {
		name      string
		evs       []traces.Event
		violation int // index of the event reported, -1 = none
	}{
		{"overlapping pushes land in either order", []traces.Event{push(1, 1, 4), push(2, 2, 3), take(0, 2, 5, 6), take(1, 1, 7, 8)}, -1},
		{"non-overlapping pushes keep FIFO order", []traces.Event{push(1, 1, 2), push(2, 3, 4), take(0, 2, 5, 6), take(1, 1, 7, 8)}, 2},
		{"overlapping takes in either order", []traces.Event{push(1, 1, 2), push(2, 3, 4), take(1, 2, 6, 7), take(0, 1, 5, 9)}, -1},
		{"the overlapping take never comes", []traces.Event{push(1, 1, 2), push(2, 3, 4), take(1, 2, 6, 7)}, 2},
		{"a take without an interval", []traces.Event{push(1, 1, 2), {Kind: traces.KindTake, Seq: 5, Task: 1, Worker: 0, Victim: -1, Source: traces.SourceGlobal}}, 1},
	} {
		r := ivCheck(h, c.evs)
		if ivWant(t, c.name, r, c.violation) && c.violation < 0 && r.Reordered != 1 {
			t.Errorf("%s: Reordered = %d, want 1", c.name, r.Reordered)
		}
	}
}

// A batch steal that runs its last task (steal-last, crossbeam's batch
// from a LIFO deque): a batch may end anywhere in the first half of the
// victim's deque, counted as the thief read it, the owner's own takes that
// returned after the steal was called not yet subtracted.
func TestIntervalStealLast(t *testing.T) {
	h := traces.Header{Format: traces.Format, Version: traces.Version, Minor: 1, Order: traces.OrderIntervals, Executor: "cases", Workers: 2, Policy: "worksteal",
		Config: map[string]int{"steal-half": 1, "steal-last": 1}}
	spawns := func(n int64) []traces.Event {
		var evs []traces.Event
		for task := int64(1); task <= n; task++ {
			s := uint64(2*task - 1)
			evs = append(evs, traces.Event{Kind: traces.KindSpawn, Seq: s, Call: s, Return: s + 1, Task: task, Worker: 0, Victim: -1, Queue: traces.LocalQueue(0)})
		}
		return evs
	}
	take := func(w int32, task int64, call, ret uint64, src traces.Source, victim int32) traces.Event {
		return traces.Event{Kind: traces.KindTake, Seq: ret, Call: call, Return: ret, Task: task, Worker: w, Victim: victim, Source: src}
	}
	steal := func(task int64, call, ret uint64) traces.Event {
		return take(1, task, call, ret, traces.SourceSteal, 0)
	}
	pop := func(task int64, call, ret uint64) traces.Event {
		return take(0, task, call, ret, traces.SourceLocal, -1)
	}
	for _, c := range []struct {
		name      string
		evs       []traces.Event
		violation int // index of the event reported, -1 = none
	}{
		{"a batch of two runs its second", append(spawns(4), steal(2, 10, 11)), -1},
		{"a batch of one", append(spawns(4), steal(1, 10, 11)), -1},
		{"a batch past the half", append(spawns(4), steal(3, 10, 11)), 4},
		{"the owner's pop during the steal", append(spawns(3), steal(2, 10, 14), pop(3, 11, 12)), -1},
		{"the owner's pop before the steal", append(spawns(3), pop(3, 7, 8), steal(2, 9, 10)), 4},
	} {
		evs := slices.Clone(c.evs)
		slices.SortStableFunc(evs, func(a, b traces.Event) int { return int(a.Seq) - int(b.Seq) })
		ivWant(t, c.name, ivCheck(h, evs), c.violation)
	}
	h.Config = map[string]int{"steal-last": 1}
	if _, err := conform.New(h); err == nil || !strings.Contains(err.Error(), "steal-last = 1 without steal-half = 1") {
		t.Errorf("steal-last without steal-half: %v", err)
	}
}

// fifoBatchStart is the header of workers workers with FIFO deques and
// steal-half under order intervals, and four tasks spawned onto w0's deque
// (seq 1 to 8).
func fifoBatchStart(workers int) (traces.Header, []traces.Event) {
	h := traces.Header{Format: traces.Format, Version: traces.Version, Minor: 1, Order: traces.OrderIntervals, Executor: "cases", Workers: workers, Policy: "worksteal",
		Config: map[string]int{"steal-half": 1, "owner-lifo": 0}}
	var evs []traces.Event
	for task := int64(1); task <= 4; task++ {
		s := uint64(2*task - 1)
		evs = append(evs, traces.Event{Kind: traces.KindSpawn, Seq: s, Call: s, Return: s + 1, Task: task, Worker: 0, Victim: -1, Queue: traces.LocalQueue(0)})
	}
	return h, evs
}

// A steal of half a FIFO deque (its first task run) leaves the batch's
// size open: a later take shows whether a task went with the batch (the
// thief takes it from its own deque) or stayed (the owner takes it).
func TestIntervalOpenBatch(t *testing.T) {
	h, evs := fifoBatchStart(3)
	take := func(w int32, task int64, seq uint64, src traces.Source, victim int32) traces.Event {
		return traces.Event{Kind: traces.KindTake, Seq: seq, Call: seq - 1, Return: seq, Task: task, Worker: w, Victim: victim, Source: src}
	}
	poll := func(w int32, task int64, seq uint64) []traces.Event {
		return []traces.Event{
			{Kind: traces.KindPollBegin, Seq: seq, Task: task, Worker: w, Victim: -1},
			{Kind: traces.KindPollEnd, Seq: seq + 1, Task: task, Worker: w, Victim: -1, Result: traces.ResultReady},
		}
	}
	steal := append([]traces.Event{take(1, 1, 10, traces.SourceSteal, 0)}, poll(1, 1, 11)...)
	for _, c := range []struct {
		name      string
		after     []traces.Event
		violation int // index of the event reported, -1 = none
	}{
		{"the thief takes the batch's second task", []traces.Event{take(1, 2, 14, traces.SourceLocal, -1)}, -1},
		{"the owner takes it: the batch was one task", []traces.Event{take(0, 2, 14, traces.SourceLocal, -1)}, -1},
		{"the thief takes a task past the batch", []traces.Event{take(1, 3, 14, traces.SourceLocal, -1)}, 7},
		{"the owner took it, then the thief", append(append([]traces.Event{take(0, 2, 14, traces.SourceLocal, -1)}, poll(0, 2, 15)...), take(1, 2, 18, traces.SourceLocal, -1)), 10},
		// The owner takes a task behind the batch: the batch held the
		// tasks in front of it, which the thief then takes from its deque.
		{"the owner takes the task behind the batch", []traces.Event{take(0, 3, 14, traces.SourceLocal, -1), take(1, 2, 16, traces.SourceLocal, -1)}, -1},
		// Half of four tasks is two: t3 was in no batch, nobody took it.
		{"the owner takes a task past half", []traces.Event{take(0, 4, 14, traces.SourceLocal, -1)}, 7},
		// A thief of the thief takes the batch's task.
		{"a thief of the thief takes it", []traces.Event{take(0, 3, 14, traces.SourceLocal, -1), take(2, 2, 16, traces.SourceSteal, 1)}, -1},
	} {
		all := append(append(slices.Clone(evs), steal...), c.after...)
		ivWant(t, c.name, ivCheck(h, all), c.violation)
	}
}

// TestIntervalBatchAfterOverlappingTake: the owner's take of the head has
// an interval that contains a thief's batch steal of the task behind it
// (the owner's pop took effect first, its ret came late). The batch is the
// stolen task and the ones after it, not the task in front.
func TestIntervalBatchAfterOverlappingTake(t *testing.T) {
	h, evs := fifoBatchStart(2)
	ev := func(k traces.Kind, seq uint64, w int32, task int64) traces.Event {
		return traces.Event{Kind: k, Seq: seq, Task: task, Worker: w, Victim: -1}
	}
	stealT2 := traces.Event{Kind: traces.KindTake, Seq: 11, Call: 10, Return: 11, Task: 2, Worker: 1, Victim: 0, Source: traces.SourceSteal}
	ownerT1 := traces.Event{Kind: traces.KindTake, Seq: 20, Call: 9, Return: 20, Task: 1, Worker: 0, Victim: -1, Source: traces.SourceLocal}
	thiefT3 := traces.Event{Kind: traces.KindTake, Seq: 15, Call: 14, Return: 15, Task: 3, Worker: 1, Victim: -1, Source: traces.SourceLocal}
	evs = append(evs, stealT2, ev(traces.KindPollBegin, 12, 1, 2), ev(traces.KindPollEnd, 13, 1, 2), thiefT3, ownerT1)
	evs[6].Result = traces.ResultReady
	if r := ivCheck(h, evs); r.Err != nil {
		t.Fatalf("the batch after the owner's overlapping take: %s", r.Err.Msg)
	}
	// The owner's take called after the steal returned cannot have come
	// first: t1 was in front of t2.
	late := slices.Clone(evs)
	late[len(late)-1].Call = 16
	if r := ivCheck(h, late); r.Err == nil || r.Err.Index != 4 {
		t.Fatalf("a take of the head called after the steal: want a violation at event 5, got %v", r.Err)
	}
}

// TestIntervalBatchReadBeforeOwnerTake: the thief reads the victim's
// length (three tasks) when its steal begins; the owner's take of the
// last task returns within the steal and is placed before it, so at the
// steal's Seq the model's half of two tasks moves nothing. The batch was
// half of three: the second task went with it, and the thief takes it
// from its own deque.
func TestIntervalBatchReadBeforeOwnerTake(t *testing.T) {
	h, evs := fifoBatchStart(2)
	evs = evs[:3] // w0's deque: t1 t2 t3
	ev := func(k traces.Kind, seq uint64, w int32, task int64) traces.Event {
		return traces.Event{Kind: k, Seq: seq, Task: task, Worker: w, Victim: -1}
	}
	ownerT3 := traces.Event{Kind: traces.KindTake, Seq: 11, Call: 10, Return: 11, Task: 3, Worker: 0, Victim: -1, Source: traces.SourceLocal}
	stealT1 := traces.Event{Kind: traces.KindTake, Seq: 13, Call: 9, Return: 13, Task: 1, Worker: 1, Victim: 0, Source: traces.SourceSteal}
	thiefT2 := traces.Event{Kind: traces.KindTake, Seq: 17, Call: 16, Return: 17, Task: 2, Worker: 1, Victim: -1, Source: traces.SourceLocal}
	done := func(seq uint64, w int32, task int64) []traces.Event {
		end := ev(traces.KindPollEnd, seq+1, w, task)
		end.Result = traces.ResultReady
		return []traces.Event{ev(traces.KindPollBegin, seq, w, task), end}
	}
	build := func(steal traces.Event) []traces.Event {
		all := append(slices.Clone(evs), ownerT3, steal)
		all = append(all, done(14, 1, 1)...)
		all = append(all, thiefT2)
		all = append(all, done(18, 1, 2)...)
		return append(all, done(20, 0, 3)...)
	}
	if r := ivCheck(h, build(stealT1)); r.Err != nil {
		t.Fatalf("a batch of half the length read when the steal began: %s", r.Err.Msg)
	}
	// A steal that began after the owner's take returned read two tasks:
	// its batch is t1 alone, and the owner's take passed t1 and t2.
	late := stealT1
	late.Call = 12
	if r := ivCheck(h, build(late)); r.Err == nil {
		t.Fatal("a steal that began after the owner's take: no violation")
	}
}

// TestIntervalBatchCap: crossbeam-deque caps a batch at 32 tasks
// (MAX_BATCH), header steal-max. From a LIFO deque of 70 tasks a batch
// steal may run any of the first 32 (a batch of 32), not the 33rd, which
// half alone would allow; from a FIFO deque the thief runs the first and
// may find the next 31 in its deque, not the 32nd after it.
func TestIntervalBatchCap(t *testing.T) {
	const n = 70
	head := func(fifo bool, max int) (traces.Header, []traces.Event) {
		cfg := map[string]int{"steal-half": 1, "owner-lifo": 1, "steal-last": 1}
		if fifo {
			cfg = map[string]int{"steal-half": 1, "owner-lifo": 0}
		}
		if max > 0 {
			cfg["steal-max"] = max
		}
		h := traces.Header{Format: traces.Format, Version: traces.Version, Minor: 1, Order: traces.OrderIntervals, Executor: "cases", Workers: 2, Policy: "worksteal", Config: cfg}
		var evs []traces.Event
		for task := int64(1); task <= n; task++ {
			s := uint64(2*task - 1)
			evs = append(evs, traces.Event{Kind: traces.KindSpawn, Seq: s, Call: s, Return: s + 1, Task: task, Worker: 0, Victim: -1, Queue: traces.LocalQueue(0)})
		}
		return h, evs
	}
	take := func(w int32, task int64, seq uint64, src traces.Source, victim int32) traces.Event {
		return traces.Event{Kind: traces.KindTake, Seq: seq, Call: seq - 1, Return: seq, Task: task, Worker: w, Victim: victim, Source: src}
	}
	const s0 = 2*n + 10
	for _, c := range []struct {
		name  string
		fifo  bool
		max   int
		after func() []traces.Event
		ok    bool
	}{
		{"lifo: a batch of 32", false, 32, func() []traces.Event { return []traces.Event{take(1, 32, s0, traces.SourceSteal, 0)} }, true},
		{"lifo: a batch of 33", false, 32, func() []traces.Event { return []traces.Event{take(1, 33, s0, traces.SourceSteal, 0)} }, false},
		{"lifo: a batch of 33 without a cap", false, 0, func() []traces.Event { return []traces.Event{take(1, 33, s0, traces.SourceSteal, 0)} }, true},
		// The thief runs t1; its deque then holds t2.. (FIFO: it takes t2
		// first); the owner takes the task just past the batch.
		{"fifo: a batch of 32", true, 32, func() []traces.Event {
			return []traces.Event{take(1, 1, s0, traces.SourceSteal, 0), take(0, 33, s0+3, traces.SourceLocal, -1)}
		}, true},
		{"fifo: a batch of 33", true, 32, func() []traces.Event {
			return []traces.Event{take(1, 1, s0, traces.SourceSteal, 0), take(0, 34, s0+3, traces.SourceLocal, -1)}
		}, false},
		{"fifo: a batch of 33 without a cap", true, 0, func() []traces.Event {
			return []traces.Event{take(1, 1, s0, traces.SourceSteal, 0), take(0, 34, s0+3, traces.SourceLocal, -1)}
		}, true},
	} {
		h, evs := head(c.fifo, c.max)
		r := ivCheck(h, append(evs, c.after()...))
		switch {
		case c.ok && r.Err != nil:
			t.Errorf("%s: %s", c.name, r.Err.Msg)
		case !c.ok && r.Err == nil:
			t.Errorf("%s: no violation", c.name)
		}
	}
	h, _ := head(true, 32)
	h.Config = map[string]int{"steal-max": 32}
	if _, err := conform.New(h); err == nil || !strings.Contains(err.Error(), "steal-max = 32 without steal-half = 1") {
		t.Errorf("steal-max without steal-half: %v", err)
	}
}
