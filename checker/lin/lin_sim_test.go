package lin

import (
	"math/rand/v2"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// linBug is a bug a simulated executor can have.
type linBug uint8

const (
	bugNone        linBug = iota
	bugTakeTwice          // a task is taken by a second worker while it runs
	bugStealOwner         // a thief takes from the owner end
	bugLoseElement        // a queue drops an element it was given
	bugWakeTwice          // a wake of a QUEUED task enqueues it again
)

// linSim is a sequential simulation of a work-stealing executor that follows
// the rules (or breaks one, by bug), recording each operation as an event
// whose interval [Call, Return] contains the instant the operation took
// effect: so the history is linearizable exactly when the run was legal.
type linSim struct {
	r        *rand.Rand
	workers  int
	localCap int
	pendings int
	bug      linBug
	injected bool
	spread   int // how far an interval reaches around its effect tick

	clock  uint64
	events []traces.Event

	st     []model.TaskState // by task id
	npend  []int
	cur    []int64 // worker → task polled (0 = idle)
	poll   []bool  // worker is inside the poll of cur
	global []int64
	local  [][]int64
	spawn  int
	done   int
	waitq  []int64
}

// oldestWaiting returns a WAITING task, or 0. waitq holds tasks that
// became WAITING, in order; entries no longer WAITING are dropped lazily.
func (s *linSim) oldestWaiting() int64 {
	for len(s.waitq) > 0 {
		if t := s.waitq[0]; s.st[t] == model.Waiting {
			return t
		}
		s.waitq = s.waitq[1:]
	}
	return 0
}

// buggyRun runs the simulation of seed with bug (3 workers, 8 tasks, 2
// Pending each), its operations overlapping but not so widely that the bug
// is hidden; injected is false when the run did not have the bug.
func buggyRun(seed uint64, bug linBug) (events []traces.Event, injected bool) {
	sim := newLinSim(seed, 3, 8, 2, bug)
	sim.spread = 5
	return sim.run(10000), sim.injected
}

func newLinSim(seed uint64, workers, tasks, pendings int, bug linBug) *linSim {
	s := &linSim{
		r: rand.New(rand.NewPCG(seed, 7)), workers: workers, localCap: 3, pendings: pendings, bug: bug,
		st: make([]model.TaskState, tasks+1), npend: make([]int, tasks+1),
		cur: make([]int64, workers), poll: make([]bool, workers), local: make([][]int64, workers),
		spread: 25,
	}
	return s
}

// record appends e with an interval around a fresh effect tick. The spread
// makes operations overlap; each interval contains its effect tick.
func (s *linSim) record(e traces.Event) {
	s.clock += 10
	e.Seq = s.clock
	e.Call = s.clock - min(uint64(s.r.IntN(s.spread+1)), s.clock-1)
	e.Return = s.clock + uint64(s.r.IntN(s.spread+1))
	if e.Victim == 0 && e.Source != traces.SourceSteal {
		e.Victim = -1
	}
	s.events = append(s.events, e)
}

func (s *linSim) push(w int, t int64) traces.Queue {
	if s.bug == bugLoseElement && !s.injected && len(s.global)+len(s.local[0]) > 0 && s.r.IntN(4) == 0 {
		s.injected = true
		if w >= 0 {
			return traces.LocalQueue(w) // recorded, never stored
		}
		return traces.QueueGlobal
	}
	if w >= 0 && len(s.local[w]) < s.localCap {
		s.local[w] = append(s.local[w], t)
		return traces.LocalQueue(w)
	}
	s.global = append(s.global, t)
	return traces.QueueGlobal
}

// run performs steps until every task is DONE or maxSteps.
func (s *linSim) run(maxSteps int) []traces.Event {
	n := len(s.st) - 1
	for step := 0; step < maxSteps; step++ {
		var choices []func()
		if s.spawn < n {
			choices = append(choices, s.doSpawn)
		}
		for w := range s.workers {
			switch {
			case s.cur[w] == 0 && s.canTake(w):
				choices = append(choices, func() { s.doTake(w) })
			case s.cur[w] != 0 && !s.poll[w]:
				choices = append(choices, func() { s.doPollBegin(w) })
			case s.cur[w] != 0 && s.poll[w]:
				choices = append(choices, func() { s.doPollEnd(w) })
			}
		}
		// Wakes: of tasks waiting for one or running, and now and then of
		// any task (coalesced, late). A few sampled tasks per step keep a
		// step O(workers).
		for range 4 {
			if s.spawn == 0 {
				break
			}
			t := 1 + s.r.IntN(s.spawn)
			if s.st[t] == model.Waiting || s.st[t] == model.Running && s.npend[t] > 0 || s.r.IntN(8) == 0 {
				choices = append(choices, func() { s.doWake(int64(t)) })
			}
		}
		if t := s.oldestWaiting(); t != 0 {
			choices = append(choices, func() { s.doWake(t) })
		}
		if s.done == n || len(choices) == 0 {
			break
		}
		choices[s.r.IntN(len(choices))]()
	}
	s.sequentialWorkers()
	return s.events
}

// sequentialWorkers makes each worker's operations sequential, as they are
// in an executor (one goroutine per worker): an operation returns before the
// worker's next one is called. Each interval still holds its effect tick.
func (s *linSim) sequentialWorkers() {
	last := map[int32]int{}
	for i := range s.events {
		e := &s.events[i]
		if e.Worker < 0 {
			continue
		}
		if j, ok := last[e.Worker]; ok {
			p := &s.events[j]
			p.Return = min(p.Return, e.Seq-1)
			e.Call = max(e.Call, p.Return+1)
		}
		last[e.Worker] = i
	}
}

func (s *linSim) doSpawn() {
	s.spawn++
	t := int64(s.spawn)
	// From outside, or from a task running on a worker.
	w := -1
	if k := s.r.IntN(s.workers + 1); k < s.workers && s.cur[k] != 0 && s.poll[k] {
		w = k
	}
	s.st[t] = model.Queued
	q := s.push(w, t)
	s.record(traces.Event{Kind: traces.KindSpawn, Task: t, Worker: int32(w), Queue: q})
}

func (s *linSim) canTake(w int) bool {
	if len(s.local[w]) > 0 || len(s.global) > 0 {
		return true
	}
	for v := range s.workers {
		if v != w && len(s.local[v]) > 0 {
			return true
		}
	}
	return false
}

func (s *linSim) doTake(w int) {
	var t int64
	e := traces.Event{Kind: traces.KindTake, Worker: int32(w), Victim: -1}
	switch {
	case len(s.local[w]) > 0: // POLL-LOCAL: owner end (tail)
		l := s.local[w]
		t, s.local[w] = l[len(l)-1], l[:len(l)-1]
		e.Source = traces.SourceLocal
	case len(s.global) > 0: // GLOBAL-STEAL: head
		t, s.global = s.global[0], s.global[1:]
		e.Source = traces.SourceGlobal
	default: // WORKER-STEAL: head of a victim's deque
		var vs []int
		for v := range s.workers {
			if v != w && len(s.local[v]) > 0 {
				vs = append(vs, v)
			}
		}
		v := vs[s.r.IntN(len(vs))]
		l := s.local[v]
		if s.bug == bugStealOwner && !s.injected && len(l) >= 2 {
			s.injected = true
			t, s.local[v] = l[len(l)-1], l[:len(l)-1]
		} else {
			t, s.local[v] = l[0], l[1:]
		}
		e.Source, e.Victim = traces.SourceSteal, int32(v)
	}
	e.Task = t
	s.st[t] = model.Running
	s.cur[w] = t
	s.record(e)
	if s.bug == bugTakeTwice && !s.injected && s.workers > 1 {
		// Another idle worker takes the same task: recorded as a second
		// take from the same queue.
		for v := range s.workers {
			if v != w && s.cur[v] == 0 {
				s.injected = true
				e2 := e
				e2.Worker = int32(v)
				if e.Source == traces.SourceLocal {
					e2.Source, e2.Victim = traces.SourceSteal, int32(w)
				}
				s.record(e2)
				break
			}
		}
	}
}

func (s *linSim) doPollBegin(w int) {
	s.poll[w] = true
	s.record(traces.Event{Kind: traces.KindPollBegin, Task: s.cur[w], Worker: int32(w)})
}

func (s *linSim) doPollEnd(w int) {
	t := s.cur[w]
	s.cur[w], s.poll[w] = 0, false
	if s.npend[t] == s.pendings {
		s.st[t] = model.Done
		s.done++
		s.record(traces.Event{Kind: traces.KindPollEnd, Task: t, Worker: int32(w), Result: traces.ResultReady})
		return
	}
	s.npend[t]++
	notified := s.st[t] == model.Notified
	s.record(traces.Event{Kind: traces.KindPollEnd, Task: t, Worker: int32(w), Result: traces.ResultPending})
	if notified {
		s.st[t] = model.Queued
		q := s.push(w, t)
		s.record(traces.Event{Kind: traces.KindRequeue, Task: t, Worker: int32(w), Queue: q})
		return
	}
	s.st[t] = model.Waiting
	s.waitq = append(s.waitq, t)
}

func (s *linSim) doWake(t int64) {
	w := -1
	if k := s.r.IntN(s.workers + 1); k < s.workers && s.cur[k] != 0 {
		w = k // a wake from a task running on worker k
	}
	e := traces.Event{Kind: traces.KindWake, Task: t, Worker: int32(w)}
	switch s.st[t] {
	case model.Waiting:
		s.st[t] = model.Queued
		e.Outcome = traces.OutcomeScheduled
		e.Queue = s.push(w, t)
	case model.Running:
		s.st[t] = model.Notified
		e.Outcome = traces.OutcomeNotified
	case model.Queued:
		e.Outcome = traces.OutcomeCoalesced
		if s.bug == bugWakeTwice && !s.injected {
			s.injected = true
			e.Outcome = traces.OutcomeScheduled
			e.Queue = s.push(w, t)
		}
	case model.Notified:
		e.Outcome = traces.OutcomeCoalesced
	case model.Done:
		e.Outcome = traces.OutcomeLate
	default:
		return
	}
	s.record(e)
}
