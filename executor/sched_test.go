package executor

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/execspec/execspec/traces"
)

// testSched is a deterministic Scheduler: exactly one controlled goroutine
// runs at a time; at every yield point a seeded random choice picks the
// next among those that can run. Deadlock (every goroutine blocked) is
// reported, never waited out.
type testSched struct {
	rng   *rand.Rand
	gs    []*cgo // live controlled goroutines, in creation order
	cur   *cgo   // the one running; set by whoever hands it the baton
	steps int
	max   int
	fail  error
	over  chan struct{}
}

// cgo is one controlled goroutine.
type cgo struct {
	id    int
	run   chan struct{} // the baton
	ready func() bool   // nil: runnable
}

func newTestSched(seed uint64) *testSched {
	return &testSched{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), max: 2_000_000, over: make(chan struct{})}
}

var errDeadlock = errors.New("every controlled goroutine is blocked")

// Run runs main as the first controlled goroutine and returns when every
// controlled goroutine has ended, or on deadlock.
func (s *testSched) Run(main func()) error {
	g := s.add()
	go s.body(g, main)
	s.cur = g
	g.run <- struct{}{}
	select {
	case <-s.over:
		return s.fail
	case <-time.After(60 * time.Second):
		return errors.New("controlled run timed out (a goroutine blocked outside the Scheduler?)")
	}
}

func (s *testSched) add() *cgo {
	g := &cgo{id: len(s.gs), run: make(chan struct{}, 1)}
	s.gs = append(s.gs, g)
	return g
}

func (s *testSched) body(g *cgo, fn func()) {
	<-g.run
	fn()
	s.gs = slices.DeleteFunc(s.gs, func(x *cgo) bool { return x == g })
	if len(s.gs) == 0 {
		close(s.over)
		return
	}
	if next := s.pick(); next != nil {
		s.cur = next
		next.run <- struct{}{}
	}
}

// pick chooses the next goroutine to run, among those runnable now. Called
// only by the running goroutine, so it owns all the scheduler's state.
func (s *testSched) pick() *cgo {
	s.steps++
	var can []*cgo
	for _, g := range s.gs {
		if g.ready == nil || g.ready() {
			can = append(can, g)
		}
	}
	if len(can) == 0 || s.steps > s.max {
		if s.fail == nil {
			s.fail = errDeadlock
			if s.steps > s.max {
				s.fail = fmt.Errorf("more than %d steps", s.max)
			}
			close(s.over)
		}
		return nil
	}
	g := can[s.rng.IntN(len(can))]
	g.ready = nil
	return g
}

func (s *testSched) Go(fn func()) {
	g := s.add()
	go s.body(g, fn)
}

func (s *testSched) Yield(p Point) { s.Block(p, nil) }

func (s *testSched) Block(p Point, ready func() bool) {
	me := s.cur
	me.ready = ready
	next := s.pick()
	if next == nil {
		select {} // deadlock: reported by Run; this goroutine stays parked
	}
	if next == me {
		return
	}
	s.cur = next
	next.run <- struct{}{}
	<-me.run
}

// runControlled runs workload w on a fresh executor under a testSched with
// the given seed, and returns the recorded events (sorted by Seq) and the
// workload's error.
func runControlled(newEx func() Executor, w workload, seed uint64) ([]traces.Event, int, error) {
	s := newTestSched(seed)
	ex := newEx()
	rec := &traces.Log{}
	ex.(Reporter).SetRecorder(rec)
	ex.(Controllable).SetScheduler(s)
	e := env{gofn: s.Go, sched: s, scale: 5}
	var n int
	var werr error
	err := s.Run(func() {
		n, werr = w.run(ex, e)
		if cerr := ex.Close(); cerr != nil {
			werr = errors.Join(werr, cerr)
		}
	})
	return rec.Events(), n, errors.Join(err, werr)
}

func TestControlled(t *testing.T) {
	execs := map[string]func() Executor{
		"worksteal_slot_half_cap2": func() Executor {
			return NewWorkSteal(WorkStealConfig{Workers: 3, LocalCap: 2, StealHalf: true, LIFOSlot: true, GlobalInterval: 3})
		},
		"worksteal_fifo_owner": func() Executor {
			return NewWorkSteal(WorkStealConfig{Workers: 2, LocalCap: 3, OwnerFIFO: true})
		},
		"timeslice_2_workers": func() Executor { return NewTimeslice(TimesliceConfig{Workers: 2, Slice: 3}) },
		"priority_2_workers":  func() Executor { return NewPriority(PriorityConfig{Workers: 2, Aging: 1}) },
	}
	for _, name := range BuiltinNames() {
		execs[name], _ = Builtin(name)
	}
	for name, newEx := range execs {
		t.Run(name, func(t *testing.T) {
			for _, w := range workloads {
				if !w.controlled {
					continue
				}
				for seed := range uint64(6) {
					evs, n, err := runControlled(newEx, w, seed)
					if err != nil {
						t.Fatalf("%s seed %d: %v", w.name, seed, err)
					}
					if err := checkEvents(describe(newEx()), evs, n, true); err != nil {
						t.Fatalf("%s seed %d: %v", w.name, seed, err)
					}
				}
			}
		})
	}
}

// TestControlledDeterministic: the same seed gives the same events.
func TestControlledDeterministic(t *testing.T) {
	for _, name := range []string{"worksteal", "wakeable", "timeslice"} {
		newEx, _ := Builtin(name)
		w := workloads[1] // wake_from_outside: wakes from a helper goroutine
		a, _, err := runControlled(newEx, w, 7)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := runControlled(newEx, w, 7)
		if err != nil {
			t.Fatal(err)
		}
		strip := func(evs []traces.Event) []traces.Event {
			for i := range evs {
				evs[i].Detail = ""
			}
			return evs
		}
		if len(a) < 100 {
			t.Fatalf("%s: only %d events", name, len(a))
		}
		if !slices.Equal(strip(a), strip(b)) {
			t.Errorf("%s: two runs with seed 7 recorded different events (%d and %d)", name, len(a), len(b))
		}
		c, _, _ := runControlled(newEx, w, 8)
		if slices.Equal(strip(a), strip(c)) {
			t.Logf("%s: seeds 7 and 8 gave the same events", name)
		}
	}
}
