package conform_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/traces"
)

// sameWithAndWithoutIndex checks a trace with the global queue's index and
// without it (by scanning): every event gets the same answer, and the
// reports are the same; so are the states (Lanes) after every event, if
// lanes, else at the violation.
func sameWithAndWithoutIndex(t *testing.T, what string, h traces.Header, evs []traces.Event, lanes bool) {
	t.Helper()
	a, err := conform.New(h)
	if err != nil {
		t.Fatal(err)
	}
	b, err := conform.NewWithoutIndex(h)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range evs {
		ea, eb := a.Step(e), b.Step(e)
		if fmt.Sprint(ea) != fmt.Sprint(eb) {
			t.Fatalf("%s: event %d: with the index %v, without %v", what, i+1, ea, eb)
		}
		if !lanes && ea == nil {
			continue
		}
		// BoundedLanes first: it reads the order without restoring it.
		if la, lb := a.BoundedLanes(3), b.BoundedLanes(3); la != lb {
			t.Fatalf("%s: event %d: bounded, with the index\n%s\nwithout\n%s", what, i+1, la, lb)
		}
		if la, lb := a.Lanes(), b.Lanes(); la != lb {
			t.Fatalf("%s: event %d: with the index\n%s\nwithout\n%s", what, i+1, la, lb)
		}
		if ea != nil {
			break
		}
	}
	ra, rb := a.Finish(), b.Finish()
	if ra.Verdict != rb.Verdict || ra.Reordered != rb.Reordered || ra.Summary() != rb.Summary() || fmt.Sprint(ra.Err) != fmt.Sprint(rb.Err) {
		t.Fatalf("%s: with the index %s (%d reordered)\n%s\nwithout %s (%d reordered)\n%s", what, ra.Verdict, ra.Reordered, ra.Summary(), rb.Verdict, rb.Reordered, rb.Summary())
	}
}

// globalIntervalsTrace is n pushes onto the global queue, each with a
// random interval, then takes by two workers in overlapping pairs of a
// shuffled order (near the queue's order, or near its reverse): traces
// that conform, and many that do not, for reorders and obligations on the
// global queue.
func globalIntervalsTrace(rnd *rand.Rand) (traces.Header, []traces.Event) {
	h := traces.Header{Format: traces.Format, Version: traces.Version, Minor: 1, Workers: 2, Policy: "fifo", Order: traces.OrderIntervals}
	n := 2 + rnd.IntN(40)
	var evs []traces.Event
	for i := 1; i <= n; i++ {
		call := uint64(i)
		ret := call + uint64(rnd.IntN(2*n))
		evs = append(evs, traces.Event{Seq: call, Call: call, Return: ret, Kind: traces.KindSpawn, Task: int64(i), Worker: -1, Victim: -1, Queue: traces.QueueGlobal})
	}
	order := make([]int64, n)
	for i := range order {
		order[i] = int64(i + 1)
	}
	if rnd.IntN(2) == 0 {
		slices.Reverse(order)
	}
	for range rnd.IntN(n) {
		k := rnd.IntN(n - 1)
		order[k], order[k+1] = order[k+1], order[k]
	}
	base := uint64(4 * n)
	for k := 0; k < n; k += 2 {
		pair := order[k:min(k+2, n)]
		for j, x := range pair {
			call := base + uint64(j)
			evs = append(evs, traces.Event{Seq: call + 2, Call: call, Return: call + 2, Kind: traces.KindTake, Task: x, Worker: int32(j), Victim: -1, Source: traces.SourceGlobal})
		}
		for j, x := range pair {
			evs = append(evs, traces.Event{Seq: base + 4 + uint64(j), Kind: traces.KindPollBegin, Task: x, Worker: int32(j), Victim: -1})
		}
		for j, x := range pair {
			evs = append(evs, traces.Event{Seq: base + 6 + uint64(j), Kind: traces.KindPollEnd, Task: x, Worker: int32(j), Victim: -1, Result: traces.ResultReady})
		}
		base += 8
	}
	return h, evs
}

// The global queue's index (order intervals) changes no answer: the
// simulated lock-free executor's traces, correct and with each defect, and
// random reorders of pushes onto the global queue get the same verdicts,
// messages, states and reorder counts with it as by scanning the queue.
func TestIntervalsIndexMatchesScan(t *testing.T) {
	n := ivSeeds()
	if testing.Short() || raceExt {
		n = 30 // the long form runs without the race detector
	}
	for _, m := range append([]struct {
		name string
		m    ivMutant
	}{{"correct", mutNone}}, ivMutants...) {
		for seed := range uint64(n / 3) {
			s := newIVSim(seed, m.m)
			s.run()
			sameWithAndWithoutIndex(t, fmt.Sprintf("%s, seed %d", m.name, seed), s.header(), s.events, false)
		}
	}
	holds, violated := 0, 0
	for seed := range uint64(10 * n) {
		h, evs := globalIntervalsTrace(rand.New(rand.NewPCG(seed, 26)))
		sameWithAndWithoutIndex(t, fmt.Sprintf("global queue, seed %d", seed), h, evs, true)
		switch r := ivCheck(h, evs); {
		case r.Verdict == checker.Holds && r.Reordered > 0:
			holds++
		case r.Verdict == checker.Violated:
			violated++
		}
	}
	t.Logf("random global-queue traces: %d conform with reorders, %d violate", holds, violated)
	if holds < n || violated < n {
		t.Fatal("too few random traces conform with a reorder, or violate: the test hardly tests one of them")
	}
}

func FuzzIntervalsIndex(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		h, evs := globalIntervalsTrace(rand.New(rand.NewPCG(a, b)))
		sameWithAndWithoutIndex(t, "global queue", h, evs, true)
	})
}
