package model

import (
	"errors"
	"slices"
	"testing"
)

// fiveOnW0 is the model of cfg with tasks t1 … t5 spawned onto w0's deque.
func fiveOnW0(t *testing.T, cfg Config) (*Model, *State) {
	t.Helper()
	m, err := NewOpen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Init()
	for task := 1; task <= 5; task++ {
		if err := m.Apply(s, Step{Rule: SPAWN, Task: task, Worker: -1, Victim: -1, Dest: 0}); err != nil {
			t.Fatal(err)
		}
	}
	return m, s
}

// With StealLast a thief may end its batch at any of the first half of
// the victim's tasks: it runs that one, and the ones before it go to its
// own deque, in order; a task past the half cannot end a batch.
func TestStealLast(t *testing.T) {
	m, s := fiveOnW0(t, Config{Policy: WorkSteal, Workers: 2, LocalCap: 8, StealHalf: true, StealLast: true})
	// w0's queue is [t1 … t5]: batches of 1, 2 or 3 (half of 5, rounded up).
	var tasks []int
	next := s.Clone()
	m.Next(s, next, func(st Step, _ *State, err error) bool {
		if err == nil && st.Rule == WORKER_STEAL && st.Worker == 1 {
			tasks = append(tasks, st.Task)
		}
		return true
	})
	if !slices.Equal(tasks, []int{1, 2, 3}) {
		t.Errorf("w1 may steal %v, want batches ending at t1, t2, t3", tasks)
	}
	before := s.Clone()
	var pe *PremiseError
	if err := m.Apply(s, Step{Rule: WORKER_STEAL, Task: 4, Worker: 1, Victim: 0}); !errors.As(err, &pe) || pe.Premise != "t among the first half of local(v)" {
		t.Errorf("a batch ending past the half: %v", err)
	}
	if !s.Equal(before) {
		t.Error("a refused step changed the state")
	}
	if err := m.Apply(s, Step{Rule: WORKER_STEAL, Task: 3, Worker: 1, Victim: 0}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Local[1], []int32{1, 2}) || !slices.Equal(s.Local[0], []int32{4, 5}) || s.Task[2] != Running || s.Cur[1] != 3 {
		t.Fatalf("after a batch ending at t3: w1 %v, w0 %v, t3 %s\n%s", s.Local[1], s.Local[0], s.Task[2], s)
	}
	if inv, err := m.CheckInvariants(s); inv != nil {
		t.Fatalf("%s: %v", inv.Name, err)
	}
	// Without StealLast the same state steals the head only.
	m2, _ := NewOpen(Config{Policy: WorkSteal, Workers: 2, LocalCap: 8, StealHalf: true})
	s2 := m2.Init()
	for task := 1; task <= 5; task++ {
		m2.Apply(s2, Step{Rule: SPAWN, Task: task, Worker: -1, Victim: -1, Dest: 0})
	}
	if err := m2.Apply(s2, Step{Rule: WORKER_STEAL, Task: 2, Worker: 1, Victim: 0}); err == nil {
		t.Error("steal-half without steal-last ran a task that is not the head")
	}
}

// A closed model with StealLast explores without an invariant broken.
func TestStealLastExplores(t *testing.T) {
	m, err := New(Config{Policy: WorkSteal, Workers: 2, Tasks: 3, Pendings: 1, LocalCap: 3, StealHalf: true, StealLast: true})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	stack := []*State{m.Init()}
	seen[stack[0].String()] = true
	steals := 0
	for len(stack) > 0 && len(seen) < 200000 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if inv, err := m.CheckInvariants(s); inv != nil {
			t.Fatalf("%s: %v\n%s", inv.Name, err, s)
		}
		next := s.Clone()
		m.Next(s, next, func(st Step, n *State, err error) bool {
			if err != nil {
				return true
			}
			if st.Rule == WORKER_STEAL {
				steals++
			}
			if k := n.String(); !seen[k] {
				seen[k] = true
				stack = append(stack, n.Clone())
			}
			return true
		})
	}
	if steals == 0 || len(seen) < 10 {
		t.Errorf("%d states, %d steals", len(seen), steals)
	}
}

// StealMax caps a batch: with a cap of 2, a thief's batch from five tasks
// ends at t1 or t2 (steal-last), or runs t1 and moves t2 (steal-half).
func TestStealMax(t *testing.T) {
	for _, last := range []bool{true, false} {
		m, s := fiveOnW0(t, Config{Policy: WorkSteal, Workers: 2, LocalCap: 8, StealHalf: true, StealLast: last, StealMax: 2})
		var tasks []int
		m.Next(s, s.Clone(), func(st Step, _ *State, err error) bool {
			if err == nil && st.Rule == WORKER_STEAL && st.Worker == 1 {
				tasks = append(tasks, st.Task)
			}
			return true
		})
		want := []int{1}
		if last {
			want = []int{1, 2}
		}
		if !slices.Equal(tasks, want) {
			t.Errorf("steal-last %v: w1 may steal %v, want %v", last, tasks, want)
		}
		if last {
			var pe *PremiseError
			if err := m.Apply(s.Clone(), Step{Rule: WORKER_STEAL, Task: 3, Worker: 1, Victim: 0}); !errors.As(err, &pe) || pe.Premise != "a batch of at most steal-max tasks" {
				t.Errorf("a batch of three past a cap of two: %v", err)
			}
			continue
		}
		if err := m.Apply(s, Step{Rule: WORKER_STEAL, Task: 1, Worker: 1, Victim: 0}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Local[1], []int32{2}) || !slices.Equal(s.Local[0], []int32{3, 4, 5}) {
			t.Errorf("steal-half capped at 2 from t1..t5: thief %v, victim %v; want [2] and [3 4 5]", s.Local[1], s.Local[0])
		}
	}
	if err := (Config{Policy: WorkSteal, StealHalf: true, StealMax: -1}).Validate(); err == nil {
		t.Error("steal-max = -1 accepted")
	}
}
