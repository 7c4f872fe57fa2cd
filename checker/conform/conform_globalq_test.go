package conform

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

// refPriority is the priority policy's pick as model.Model makes it, on a
// slice: the first task passed over at least aging times, else the first
// task of the highest priority; a take ages every other queued task. It is
// what the checker did before the global queue's index, kept to test the
// index against.
type refPriority struct {
	aging int
	queue []int32
	prio  map[int32]int32
	age   map[int32]int
}

func (r *refPriority) pick() (int32, bool) {
	if r.aging > 0 {
		for _, u := range r.queue {
			if r.age[u] >= r.aging {
				return u, true
			}
		}
	}
	best := r.queue[0]
	for _, u := range r.queue {
		if r.prio[u] > r.prio[best] {
			best = u
		}
	}
	return best, false
}

func (r *refPriority) take(t int32) {
	if r.aging > 0 {
		for _, u := range r.queue {
			if u != t && r.age[u] < r.aging {
				r.age[u]++
			}
		}
		r.age[t] = 0
	}
	r.queue = slices.DeleteFunc(r.queue, func(u int32) bool { return u == t })
}

// priorityRun drives a v1.1 priority trace on two workers from rnd:
// spawns, takes (mostly of the reference's pick, sometimes of another
// queued task), polls that end ready or pending, wakes, and requeues of
// tasks woken during their poll that change the priority of a queued
// task. It checks each event as it goes: the checker accepts
// a take exactly when the reference picks its task, says why in the
// reference's words when not, and agrees on the queue's order and ages.
func priorityRun(t *testing.T, rnd *rand.Rand, steps int) (violated bool) {
	aging := rnd.IntN(4)
	h := traces.Header{Format: traces.Format, Version: traces.Version, Minor: 1, Executor: "ref", Workers: 2, Policy: "priority", Config: map[string]int{"aging": aging}}
	c, err := New(h)
	if err != nil {
		t.Fatal(err)
	}
	ref := &refPriority{aging: aging, prio: map[int32]int32{}, age: map[int32]int{}}
	var (
		seq     uint64
		next    int32
		running [2]int32
		waiting []int32
		trace   []string
	)
	step := func(e traces.Event) error {
		seq++
		e.Seq = seq
		trace = append(trace, fmt.Sprintf("%+v", e))
		return c.Step(e)
	}
	fail := func(format string, a ...any) {
		t.Helper()
		t.Fatalf("aging %d: "+format+"\ntrace:\n%s", append([]any{aging}, append(a, strings.Join(trace, "\n"))...)...)
	}
	prio := func() (int32, bool) { return int32(rnd.IntN(5)) - 2, true }
	for range steps {
		switch op := rnd.IntN(10); {
		case op < 3 || next == 0: // spawn
			next++
			p, _ := prio()
			if err := step(traces.Event{Kind: traces.KindSpawn, Task: int64(next), Worker: -1, Victim: -1, Queue: traces.QueueGlobal, Priority: p, Prioritized: true}); err != nil {
				fail("spawn: %v", err)
			}
			ref.queue = append(ref.queue, next)
			ref.prio[next] = p
		case op < 6: // a take by an idle worker
			w := slices.Index(running[:], 0)
			if w < 0 || len(ref.queue) == 0 {
				continue
			}
			want, aged := ref.pick()
			x := want
			if rnd.IntN(8) == 0 {
				x = ref.queue[rnd.IntN(len(ref.queue))]
			}
			err := step(traces.Event{Kind: traces.KindTake, Task: int64(x), Worker: int32(w), Victim: -1, Source: traces.SourceGlobal})
			if x != want {
				if err == nil {
					fail("take of t%d accepted, the pick is t%d", x, want)
				}
				why := fmt.Sprintf("t%d (priority %d) is first of the highest priority", want, ref.prio[want])
				if aged {
					why = fmt.Sprintf("t%d was passed over %d times (aging %d) and runs first", want, ref.age[want], aging)
				}
				reason := fmt.Sprintf("t%d (priority %d, passed over %d times) is taken while %s in the global queue %s", x, ref.prio[x], ref.age[x], why, tasksOf(ref.queue))
				if !strings.Contains(err.Error(), reason) {
					fail("take of t%d refused with\n%v\nwant the reason\n%s", x, err, reason)
				}
				if r := c.Finish(); r.Verdict != checker.Violated {
					fail("verdict %s after a violation", r.Verdict)
				}
				return true
			}
			if err != nil {
				fail("take of the pick t%d refused: %v", x, err)
			}
			ref.take(x)
			running[w] = x
			if err := step(traces.Event{Kind: traces.KindPollBegin, Task: int64(x), Worker: int32(w), Victim: -1}); err != nil {
				fail("poll-begin: %v", err)
			}
		case op < 8: // a poll ends
			w := rnd.IntN(2)
			x := running[w]
			if x == 0 {
				continue
			}
			running[w] = 0
			if rnd.IntN(3) == 0 {
				// Woken during the poll: re-queued at its end, and the
				// requeue may change the priority of the queued task.
				if err := step(traces.Event{Kind: traces.KindWake, Task: int64(x), Worker: -1, Victim: -1, Outcome: traces.OutcomeNotified}); err != nil {
					fail("wake during the poll: %v", err)
				}
				if err := step(traces.Event{Kind: traces.KindPollEnd, Task: int64(x), Worker: int32(w), Victim: -1, Result: traces.ResultPending}); err != nil {
					fail("poll-end of a notified task: %v", err)
				}
				ref.queue = append(ref.queue, x)
				e := traces.Event{Kind: traces.KindRequeue, Task: int64(x), Worker: int32(w), Victim: -1, Queue: traces.QueueGlobal}
				if rnd.IntN(2) == 0 {
					e.Priority, e.Prioritized = prio()
					ref.prio[x] = e.Priority
				}
				if err := step(e); err != nil {
					fail("requeue: %v", err)
				}
				break
			}
			res := traces.ResultReady
			if rnd.IntN(2) == 0 {
				res = traces.ResultPending
				waiting = append(waiting, x)
			}
			if err := step(traces.Event{Kind: traces.KindPollEnd, Task: int64(x), Worker: int32(w), Victim: -1, Result: res}); err != nil {
				fail("poll-end: %v", err)
			}
		default: // a wake of a waiting task, maybe with a new priority
			if len(waiting) == 0 {
				continue
			}
			k := rnd.IntN(len(waiting))
			x := waiting[k]
			waiting = slices.Delete(waiting, k, k+1)
			e := traces.Event{Kind: traces.KindWake, Task: int64(x), Worker: -1, Victim: -1, Outcome: traces.OutcomeScheduled, Queue: traces.QueueGlobal}
			if rnd.IntN(2) == 0 {
				e.Priority, e.Prioritized = prio()
				ref.prio[x] = e.Priority
			}
			if err := step(e); err != nil {
				fail("wake: %v", err)
			}
			ref.queue = append(ref.queue, x)
		}
		var b strings.Builder
		boundedQueue(&b, ref.queue, len(ref.queue), 3)
		if got := c.BoundedLanes(3); !strings.HasPrefix(got, "global "+b.String()+"\n") {
			fail("bounded lanes\n%s\nwant the global queue %s", got, b.String())
		}
		if got := c.State().Global; !slices.Equal(got, ref.queue) {
			fail("global queue %v, want %v", got, ref.queue)
		}
		for _, u := range ref.queue {
			if a, _ := c.Age(int(u)); int(a) != ref.age[u] {
				fail("t%d passed over %d times, want %d", u, a, ref.age[u])
			}
		}
	}
	return false
}

// The index's pick (a heap, aging by counting takes) is the reference's
// pick on every step of random traces, and a take of any other task is
// refused in the same words.
func TestPriorityPickMatchesReference(t *testing.T) {
	runs := 3000
	if testing.Short() || raceEnabled {
		runs = 300 // the long form runs without the race detector
	}
	violations := 0
	for seed := range uint64(runs) {
		if priorityRun(t, rand.New(rand.NewPCG(seed, 26)), 200) {
			violations++
		}
	}
	if violations < runs/10 {
		t.Fatalf("only %d of %d runs took a task the policy does not pick: the test hardly tests refusals", violations, runs)
	}
}

func FuzzPriorityPick(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		priorityRun(t, rand.New(rand.NewPCG(a, b)), 300)
	})
}

// A long queue does not hide a wrong pick: with 5,000 tasks queued, a take
// of a lower priority, and a take that ignores an aged task, are refused.
func TestPriorityPickLongQueue(t *testing.T) {
	const n = 5000
	run := func(aging int, takes []int64) error {
		h := traces.Header{Format: traces.Format, Version: traces.Version, Minor: 1, Workers: 1, Policy: "priority", Config: map[string]int{"aging": aging}}
		c, err := New(h)
		if err != nil {
			t.Fatal(err)
		}
		seq := uint64(0)
		for i := int64(1); i <= n; i++ {
			seq++
			// Priorities 0..n-1 scattered: task i has i·7919 mod n.
			if err := c.Step(traces.Event{Seq: seq, Kind: traces.KindSpawn, Task: i, Worker: -1, Victim: -1, Queue: traces.QueueGlobal, Priority: int32(i * 7919 % n), Prioritized: true}); err != nil {
				t.Fatal(err)
			}
		}
		for _, x := range takes {
			for _, e := range []traces.Event{
				{Kind: traces.KindTake, Task: x, Worker: 0, Victim: -1, Source: traces.SourceGlobal},
				{Kind: traces.KindPollBegin, Task: x, Worker: 0, Victim: -1},
				{Kind: traces.KindPollEnd, Task: x, Worker: 0, Victim: -1, Result: traces.ResultReady},
			} {
				seq++
				e.Seq = seq
				if err := c.Step(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	byPrio := func(p int64) int64 { // the task of priority p
		for i := int64(1); i <= n; i++ {
			if i*7919%n == p {
				return i
			}
		}
		panic("no task")
	}
	top, second := byPrio(n-1), byPrio(n-2)
	if err := run(0, []int64{top, second}); err != nil {
		t.Fatalf("the two highest priorities in order: %v", err)
	}
	err := run(0, []int64{top, byPrio(n - 3)})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("t%d (priority %d) is first of the highest priority", second, n-2)) {
		t.Fatalf("a lower priority over a higher one: %v", err)
	}
	// Aging 2: after two takes every queued task is aged, and the head
	// (task 1, unless taken) runs first.
	head := int64(1)
	if head == top || head == second {
		head = 2
	}
	if err := run(2, []int64{top, second, head}); err != nil {
		t.Fatalf("aged head after two takes: %v", err)
	}
	third := byPrio(n - 3)
	err = run(2, []int64{top, second, third})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("t%d was passed over 2 times (aging 2) and runs first", head)) {
		t.Fatalf("a take that ignores aging: %v", err)
	}
}
