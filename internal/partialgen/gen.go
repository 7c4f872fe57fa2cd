// Package partialgen generates partially observed traces (header
// unobserved: take, queue, outcome) of a tokio-style work-stealing executor
// as a future wrapper records them: spawns from tasks and from outside,
// polls on several workers at once, wakes from tasks, from outside and
// during a poll (yields), late wakes, and (v1.1) wakes naming no task. Every trace it
// generates conforms: every task is DONE at the end. A fixture for tests
// and benchmarks.
package partialgen

import (
	"math/rand/v2"

	"github.com/execspec/execspec/traces"
)

// Header is the header of the generated traces.
func Header(workers int) traces.Header {
	return traces.Header{Format: traces.Format, Version: traces.Version, Executor: "partialgen", Workers: workers, Policy: "unknown", Minor: traces.Minor,
		Unobserved: []string{"take", "queue", "outcome"}}
}

// Options steer Generate. The zero value works: 2 workers, 64 live tasks,
// 10,000 events, no v1.1 fields.
type Options struct {
	Workers int
	Live    int // tasks alive at once, about
	Events  int // about this many events (a few more to finish every task)
	Seed    uint64
	// V11 adds what format v1.1 has: time on every event, future on
	// polls, wakes naming no task.
	V11 bool
}

const (
	sReady = iota + 1
	sRunning
	sWaiting
	sDone
)

type task struct {
	state uint8
	woken bool
	left  int // polls before Ready
	pos   int // index in ready or waiting
}

// Generate calls emit with each event of one trace, in seq order.
func Generate(o Options, emit func(traces.Event)) {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Live <= 0 {
		o.Live = 64
	}
	if o.Events <= 0 {
		o.Events = 10000
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	tasks := []task{{}} // by id; 0 unused
	var ready, waiting []int64
	cur := make([]int64, o.Workers)
	live, n := 0, 0
	var seq uint64
	now := int64(1000)
	out := func(e traces.Event) {
		seq++
		e.Seq = seq
		e.Victim = -1
		if o.V11 {
			now += 50 + r.Int64N(500)
			e.Time = now
			if e.Kind == traces.KindPollBegin || e.Kind == traces.KindPollEnd {
				e.Future = 1
			}
		}
		n++
		emit(e)
	}
	push := func(list *[]int64, t int64) {
		tasks[t].pos = len(*list)
		*list = append(*list, t)
	}
	remove := func(list *[]int64, i int) int64 {
		l := *list
		t := l[i]
		last := l[len(l)-1]
		l[i] = last
		tasks[last].pos = i
		*list = l[:len(l)-1]
		return t
	}
	spawn := func(w int32) {
		tasks = append(tasks, task{state: sReady, left: 1 + r.IntN(4)})
		t := int64(len(tasks) - 1)
		push(&ready, t)
		live++
		out(traces.Event{Kind: traces.KindSpawn, Task: t, Worker: w})
	}
	wake := func(w int32) {
		if len(waiting) == 0 {
			return
		}
		t := remove(&waiting, r.IntN(len(waiting)))
		tasks[t].state = sReady
		push(&ready, t)
		out(traces.Event{Kind: traces.KindWake, Task: t, Worker: w})
	}
	draining := false
	for {
		if n >= o.Events && !draining {
			draining = true
			for i := 1; i < len(tasks); i++ {
				tasks[i].left = min(tasks[i].left, 1)
			}
		}
		if draining && live == 0 {
			return
		}
		if !draining && live < o.Live && r.IntN(4) == 0 {
			spawn(-1)
			continue
		}
		w := r.IntN(o.Workers)
		t := cur[w]
		if t == 0 {
			if len(ready) == 0 {
				switch {
				case len(waiting) > 0:
					wake(-1)
				case !draining:
					spawn(-1)
				default:
					// Other workers hold the rest: run them.
				}
				continue
			}
			i := len(ready) - 1 // LIFO-ish: the newest, or any
			if r.IntN(3) == 0 {
				i = r.IntN(len(ready))
			}
			t = remove(&ready, i)
			tasks[t].state, tasks[t].woken = sRunning, false
			cur[w] = t
			out(traces.Event{Kind: traces.KindPollBegin, Task: t, Worker: int32(w)})
			continue
		}
		switch k := r.IntN(100); {
		case k < 12 && !draining && live < 2*o.Live:
			spawn(int32(w))
		case k < 24 && !draining:
			wake(int32(w))
		case k < 30 && !draining:
			tasks[t].woken = true // a yield: woken during its poll
			out(traces.Event{Kind: traces.KindWake, Task: t, Worker: int32(w)})
		case k < 32 && o.V11:
			out(traces.Event{Kind: traces.KindWake, Worker: int32(w)}) // a no-op waker (v1.1)
		case k < 34 && len(tasks) > 2:
			if u := int64(1 + r.IntN(len(tasks)-1)); tasks[u].state == sDone {
				out(traces.Event{Kind: traces.KindWake, Task: u, Worker: -1}) // late
			}
		default:
			cur[w] = 0
			pt := &tasks[t]
			pt.left--
			if pt.left <= 0 {
				pt.state = sDone
				live--
				out(traces.Event{Kind: traces.KindPollEnd, Task: t, Worker: int32(w), Result: traces.ResultReady})
				continue
			}
			out(traces.Event{Kind: traces.KindPollEnd, Task: t, Worker: int32(w), Result: traces.ResultPending})
			if pt.woken {
				pt.state = sReady
				push(&ready, t)
			} else {
				pt.state = sWaiting
				push(&waiting, t)
			}
		}
		if r.IntN(10) == 0 && !draining {
			wake(-1)
		}
	}
}

// Events returns the events of one trace.
func Events(o Options) []traces.Event {
	var ev []traces.Event
	Generate(o, func(e traces.Event) { ev = append(ev, e) })
	return ev
}
