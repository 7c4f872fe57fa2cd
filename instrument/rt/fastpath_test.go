package rt_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/instrument/rt/rtstd"
	"github.com/execspec/execspec/properties/control"
)

// contended is a program whose choices depend on what an uncontrolled
// goroutine does: controlled goroutines contend on a mutex and a
// channel, and midway one starts an uncontrolled helper (a plain go
// statement, as code that is not rewritten starts one) that answers on a
// channel a controlled select waits on beside a controlled sender.
func contended() string {
	var mu rtstd.Mutex
	var log []int
	work := make(chan int)
	var wg rtstd.WaitGroup
	for i := range 3 {
		wg.Add(1)
		rt.Go(func() {
			defer wg.Done()
			for j := range 3 {
				mu.Lock()
				log = append(log, i*10+j)
				mu.Unlock()
				rt.Gosched()
			}
			rt.Send(work, i)
		})
	}
	for range 3 {
		log = append(log, 100+rt.Recv(work))
	}
	helper := make(chan int)
	defer close(helper) // also when the run is stopped
	reply := make(chan int)
	go func() { // uncontrolled
		for v := range helper {
			reply <- v * 2
		}
	}()
	other := make(chan int)
	rt.Go(func() { rt.Send(other, 7) })
	got := false // the value of other
	for i := range 2 {
		rt.Send(helper, i)
		if got {
			log = append(log, 200+rt.Recv(reply))
			continue
		}
		c0, c1 := rt.RecvCase(reply), rt.RecvCase(other)
		switch rt.Select(false, c0, c1) {
		case 0:
			log = append(log, 200+c0.V)
		case 1:
			got = true
			log = append(log, 400+c1.V, 500+rt.Recv(reply))
		}
	}
	if !got {
		log = append(log, 300+rt.Recv(other))
	}
	wg.Wait()
	return fmt.Sprint(log)
}

// The fast path of settleBeforeChoice changes no run and no replay: for
// each seed and strategy, the run with it and the run that settles
// before every choice make the same choices, steps and checksum and get
// the same result, and the schedule of either replays under the other.
// The fast path must also be taken (the test would say nothing if it
// never was).
func TestFastPathKeepsReplays(t *testing.T) {
	before := rt.SkippedSettles.Load()
	defer func() { *rt.AlwaysSettle = false }()
	for seed := range uint64(30) {
		// Each strategy's run settling before every choice, then with
		// the fast path.
		slow, want := twoWays(t, "settling always", seed, rt.Config{}, rt.AlwaysSettle, contended)
		for i := range want {
			var out string
			if err := rt.Replay(t, slow[i], func(*testing.T) { out = contended() }); err != nil || out != want[i] {
				t.Fatalf("seed %d, strategy %d: the schedule made settling always replays as %s with the fast path: %v", seed, i, out, err)
			}
		}
	}
	if rt.SkippedSettles.Load() == before {
		t.Fatal("the fast path was never taken")
	}
}

// twoWays runs body under random and PCT schedules from seed with *knob
// set, then unset, and fails t unless both ways made the same choices,
// steps and checksum and got the same result; it returns the schedules
// made with *knob set and the results.
func twoWays(t *testing.T, what string, seed uint64, cfg rt.Config, knob *bool, body func() string) (scs []control.Schedule, results []string) {
	t.Helper()
	runs := func(on bool) (got []string, scs []control.Schedule) {
		*knob = on
		for _, s := range []control.Strategy{control.Random(seed), control.NewPCT(3, 200, seed)} {
			var out string
			cfg.Strategy = s
			sc, err := rt.Run(t, cfg, func(*testing.T) { out = body() })
			if err != nil {
				t.Fatalf("seed %d, %T, %s %v: %v", seed, s, what, on, err)
			}
			got, scs = append(got, out), append(scs, sc)
		}
		return got, scs
	}
	want, slow := runs(true)
	got, fast := runs(false)
	for i := range want {
		sc := fast[i]
		if got[i] != want[i] || sc.Checksum != slow[i].Checksum || sc.Steps != slow[i].Steps || !slices.Equal(sc.Choices, slow[i].Choices) {
			t.Fatalf("seed %d, strategy %d: %s false ran %s in %d steps (checksum %x), true %s in %d (%x)",
				seed, i, what, got[i], sc.Steps, sc.Checksum, want[i], slow[i].Steps, slow[i].Checksum)
		}
	}
	return slow, want
}
