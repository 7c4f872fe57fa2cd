package model

import (
	"errors"
	"strings"
	"testing"
)

// reach returns every state reachable in c, by depth-first search keyed on
// the printed state (slow, independent of the packed form it checks).
func reach(t *testing.T, c Config) (*Model, []*State) {
	t.Helper()
	m, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var all []*State
	stack := []*State{m.Init()}
	next := m.Init()
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		k := s.String() + strings.Repeat("|", 0)
		key := k + string(rune(s.Spawned)) + packKey(s)
		if seen[key] {
			continue
		}
		seen[key] = true
		all = append(all, s)
		m.Next(s, next, func(_ Step, nx *State, err error) bool {
			if err == nil {
				stack = append(stack, nx.Clone())
			}
			return true
		})
	}
	return m, all
}

func packKey(s *State) string {
	var b strings.Builder
	for i := range s.Task {
		b.WriteByte(byte(s.Task[i]))
		b.WriteByte(s.Pend[i])
		b.WriteByte(s.Wakes[i])
		b.WriteByte(s.Age[i])
		b.WriteByte(s.Tries[i])
	}
	for w := range s.Cur {
		b.WriteByte(s.Tick[w])
		b.WriteByte(s.Slice[w])
	}
	return b.String()
}

// Packing is a bijection on reachable states: unpack(pack(s)) = s, and
// different states pack differently.
func TestPackRoundTrip(t *testing.T) {
	for _, c := range []Config{
		{Policy: WorkSteal, Workers: 2, Tasks: 3, Pendings: 1},
		{Policy: WorkSteal, Workers: 3, Tasks: 2, Pendings: 2, StealHalf: true, OwnerFIFO: true, GlobalInterval: 2, LocalCap: 3},
		{Policy: Priority, Workers: 2, Tasks: 3, Endless: true},
		{Policy: TimeSlice, Workers: 2, Tasks: 2, Pendings: 2, Slice: 2},
		{Policy: Retry, Workers: 2, Tasks: 2, Pendings: 1, Retries: 2, Failures: 1},
		{Policy: WorkSteal, Workers: 2, Tasks: 2, Pendings: 1, Variant: StealOwnerEnd},
	} {
		m, states := reach(t, c)
		lay, err := m.Layout()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[[4]uint64]int{}
		buf := make([]uint64, lay.Words())
		back := m.Init()
		for k, s := range states {
			if !lay.Pack(s, buf) {
				t.Fatalf("%s: state does not fit:\n%s", c, s)
			}
			lay.Unpack(buf, back)
			if !back.Equal(s) {
				t.Fatalf("%s: round trip changed the state:\n%s\nbecame\n%s", c, s, back)
			}
			var key [4]uint64
			copy(key[:], buf)
			if j, dup := seen[key]; dup && !states[j].Equal(s) {
				t.Fatalf("%s: two states pack alike:\n%s\n%s", c, states[j], s)
			}
			seen[key] = k
		}
		if len(states) < 10 {
			t.Fatalf("%s: only %d states reached", c, len(states))
		}
	}
}

func TestApplyPremises(t *testing.T) {
	m, err := NewOpen(Config{Policy: WorkSteal, Workers: 3, LocalCap: 4})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Init()
	must := func(st Step) {
		t.Helper()
		if err := m.Apply(s, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	// t1 on w0's local queue (spawned from a task on w0), t2 global.
	must(Step{Rule: SPAWN, Task: 1, Worker: -1, Victim: -1, Dest: 0})
	must(Step{Rule: SPAWN, Task: 2, Worker: -1, Victim: -1, Dest: Global})
	must(Step{Rule: SPAWN, Task: 3, Worker: -1, Victim: -1, Dest: 1})
	for _, tc := range []struct {
		st      Step
		premise string
	}{
		{Step{Rule: SPAWN, Task: 1, Worker: -1, Dest: Global}, "task not yet spawned"},
		{Step{Rule: GLOBAL_STEAL, Task: 2, Worker: 0, Victim: -1}, "local(w) = ∅"},
		{Step{Rule: WORKER_STEAL, Task: 1, Worker: 2, Victim: 0}, "global = ∅"},
		{Step{Rule: POLL_LOCAL, Task: 1, Worker: 2, Victim: -1}, "local(w) ≠ ∅"},
		{Step{Rule: POLL_LOCAL, Task: 2, Worker: 0, Victim: -1}, "t at the owner end of local(w)"},
		{Step{Rule: TASK_COMPLETE, Task: 1, Worker: 0, Victim: -1}, "RUNNING(w)"},
		{Step{Rule: WAKE, Task: 9, Worker: -1, Dest: Global}, "task spawned"},
		{Step{Rule: POLL_LOCAL, Task: 1, Worker: 7, Victim: -1}, "0 ≤ w < W"},
	} {
		before := s.Clone()
		err := m.Apply(s, tc.st)
		var pe *PremiseError
		if !errors.As(err, &pe) || pe.Premise != tc.premise {
			t.Errorf("%s: got %v, want the premise %q to fail", tc.st, err, tc.premise)
		}
		if !s.Equal(before) {
			t.Errorf("%s: a refused step changed the state", tc.st)
		}
	}
	must(Step{Rule: POLL_LOCAL, Task: 1, Worker: 0, Victim: -1})
	must(Step{Rule: GLOBAL_STEAL, Task: 2, Worker: 2, Victim: -1})
	must(Step{Rule: WAKE, Task: 1, Worker: -1, Dest: Global}) // during the poll: NOTIFIED
	if s.Task[0] != Notified || WakeOutcome(s, 1) != "coalesced" {
		t.Fatalf("t1 is %s, want NOTIFIED", s.Task[0])
	}
	must(Step{Rule: POLL_PENDING, Task: 1, Worker: 0, Victim: -1})
	must(Step{Rule: TASK_SUSPEND, Task: 1, Worker: 0, Victim: -1})
	if s.Task[0] != Queued || len(s.Local[0]) != 1 || s.Local[0][0] != 1 {
		t.Fatalf("a task notified during its poll must be re-queued on the worker's local queue:\n%s", s)
	}
	if inv, err := m.CheckInvariants(s); inv != nil {
		t.Fatalf("%s: %v", inv.Name, err)
	}
}

func TestValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("the zero Config must be valid: %v", err)
	}
	for _, c := range []Config{
		{Policy: "lifo"},
		{Workers: -1},
		{Tasks: 100},
		{Policy: FIFO, Variant: StealOwnerEnd},
		{Variant: NoAging},
		{Variant: "bogus"},
		{Policy: Priority, Tasks: 3, Priorities: []int{1}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if _, err := ParseRule("WORKER-STEAL"); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseRule("STEAL"); err == nil {
		t.Fatal("ParseRule accepted an unknown name")
	}
}

// TestTakeable: an idle worker with work it could take has a take, named
// with its queue; a busy one, or one with nothing to take, has none.
func TestTakeable(t *testing.T) {
	m, err := New(Config{Policy: WorkSteal, Workers: 2, Tasks: 2, LocalCap: 2, Pendings: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Init()
	if _, ok := m.Takeable(s, 0); ok {
		t.Fatal("a take with nothing spawned")
	}
	for _, st := range []Step{
		{Rule: SPAWN, Worker: -1, Task: 1, Victim: -1, Dest: Global},
		{Rule: GLOBAL_STEAL, Worker: 0, Task: 1, Victim: -1, Dest: -1},
		{Rule: SPAWN, Worker: 0, Task: 2, Victim: -1, Dest: 0},
	} {
		if err := m.Apply(s, st); err != nil {
			t.Fatalf("%v: %v", st, err)
		}
	}
	if _, ok := m.Takeable(s, 0); ok {
		t.Error("worker 0 polls t1: it is not idle")
	}
	st, ok := m.Takeable(s, 1)
	if !ok || st.Rule != WORKER_STEAL || st.Task != 2 || st.TakeQueue() != "local:0" {
		t.Errorf("worker 1: %v %v (%s), want a WORKER-STEAL of t2 from local:0", st, ok, st.TakeQueue())
	}
}
