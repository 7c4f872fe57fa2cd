package model

import "fmt"

// Invariant is a safety property of every reachable state, declared as a
// value so that a list of them can be printed, filtered and validated.
type Invariant struct {
	Name string // stable, kebab-case: used in flags, traces and reports
	Doc  string // one line
	Rule Rule   // the rule whose conclusion it protects
	// Check returns nil if s satisfies the invariant, else an error that
	// says which task or worker breaks it. It does not allocate when the
	// invariant holds.
	Check func(m *Model, s *State) error
	// Closed marks invariants that need a closed model (the programs and the
	// event source's budget): they mean nothing on a recorded trace.
	Closed bool
}

// Invariants are the safety invariants of DESIGN.md §1, in the order they
// are checked (the first that fails in a state is the one reported).
var Invariants = []Invariant{
	{
		Name:  "exclusive-poll",
		Doc:   "no task is polled by two workers at once, and a worker polls one task at a time",
		Rule:  WORKER_STEAL,
		Check: checkExclusivePoll,
	},
	{
		Name:  "single-queue",
		Doc:   "a task is in at most one queue, once, and queued only when QUEUED (no duplicate enqueue)",
		Rule:  WAKE,
		Check: checkSingleQueue,
	},
	{
		Name:  "done-is-final",
		Doc:   "a DONE task is in no queue and polled by no worker: it is never polled again",
		Rule:  TASK_COMPLETE,
		Check: checkDoneFinal,
	},
	{
		Name:   "no-lost-wakeup",
		Doc:    "a WAITING task still has a wake to come",
		Rule:   TASK_SUSPEND,
		Check:  checkNoLostWakeup,
		Closed: true,
	},
	{
		Name:  "conservation",
		Doc:   "every spawned task is in exactly one place: a queue, a worker, WAITING or DONE",
		Rule:  SPAWN,
		Check: checkConservation,
	},
}

// NoStuckState is the name of the deadlock check: a state in which no rule
// is enabled must have every task DONE. The model checker applies it, since
// it needs the successors.
const NoStuckState = "no-stuck-state"

// InvariantByName returns the invariant with the given name.
func InvariantByName(name string) (Invariant, bool) {
	for _, inv := range Invariants {
		if inv.Name == name {
			return inv, true
		}
	}
	return Invariant{}, false
}

// CheckInvariants returns the first invariant that s breaks and why, or nil.
func (m *Model) CheckInvariants(s *State) (*Invariant, error) {
	for k := range Invariants {
		inv := &Invariants[k]
		if inv.Closed && m.open {
			continue
		}
		if err := inv.Check(m, s); err != nil {
			return inv, err
		}
	}
	return nil, nil
}

func checkExclusivePoll(m *Model, s *State) error {
	for w, t := range s.Cur {
		if t == 0 {
			continue
		}
		for v := w + 1; v < len(s.Cur); v++ {
			if s.Cur[v] == t {
				return fmt.Errorf("t%d is polled by w%d and w%d at once", t, w, v)
			}
		}
		if st := s.Task[t-1]; st != Running && st != Notified {
			return fmt.Errorf("w%d polls t%d, which is %s", w, t, st)
		}
	}
	for i, st := range s.Task {
		if (st == Running || st == Notified) && s.WorkerOf(i+1) < 0 {
			return fmt.Errorf("t%d is %s but no worker polls it", i+1, st)
		}
	}
	return nil
}

// occurrences counts, into n (indexed by task id), how often each task
// stands in a queue.
func occurrences(s *State, n []uint16) {
	for _, t := range s.Global {
		n[t]++
	}
	for _, q := range s.Local {
		for _, t := range q {
			n[t]++
		}
	}
}

func checkSingleQueue(m *Model, s *State) error {
	var buf [MaxTasks + 1]uint16
	n := buf[:]
	if len(s.Task) >= len(buf) {
		n = make([]uint16, len(s.Task)+1)
	}
	occurrences(s, n)
	for i, st := range s.Task {
		want := uint16(0)
		if st == Queued {
			want = 1
		}
		if n[i+1] != want {
			return fmt.Errorf("t%d stands %d times in the queues while %s", i+1, n[i+1], st)
		}
	}
	return nil
}

func checkDoneFinal(m *Model, s *State) error {
	for w, t := range s.Cur {
		if t != 0 && s.Task[t-1] == Done {
			return fmt.Errorf("w%d polls t%d, which is DONE", w, t)
		}
	}
	for _, t := range s.Global {
		if s.Task[t-1] == Done {
			return fmt.Errorf("t%d is DONE but stands in the global queue", t)
		}
	}
	for w, q := range s.Local {
		for _, t := range q {
			if s.Task[t-1] == Done {
				return fmt.Errorf("t%d is DONE but stands in w%d's local queue", t, w)
			}
		}
	}
	return nil
}

func checkNoLostWakeup(m *Model, s *State) error {
	for i, st := range s.Task {
		if st == Waiting && s.Wakes[i] == 0 {
			return fmt.Errorf("t%d is WAITING and no wake will come: a wake was lost", i+1)
		}
	}
	return nil
}

func checkConservation(m *Model, s *State) error {
	places := 0
	for _, t := range s.Global {
		if t >= 1 && int(t) <= len(s.Task) {
			places++
		}
	}
	for _, q := range s.Local {
		places += len(q)
	}
	for _, t := range s.Cur {
		if t != 0 {
			places++
		}
	}
	spawned := 0
	for i, st := range s.Task {
		switch st {
		case Idle:
			if !m.open && i < s.Spawned {
				return fmt.Errorf("t%d was spawned but is IDLE", i+1)
			}
			continue
		case Waiting, Done:
			places++
		}
		spawned++
	}
	if places != spawned {
		return fmt.Errorf("%d tasks spawned but %d places hold a task (a task was lost or copied)", spawned, places)
	}
	return nil
}
