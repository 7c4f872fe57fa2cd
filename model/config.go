package model

import (
	"errors"
	"fmt"
	"strings"
)

// Policy names a preset of the model's parameters. Policies are not separate
// models: each is a setting of Config's fields, and every field can be set on
// its own.
type Policy string

// The policies of DESIGN.md §1.
const (
	// FIFO: one global FIFO queue shared by every worker (no local queues).
	FIFO Policy = "fifo"
	// WorkSteal: a global injector queue and a bounded local deque per
	// worker; idle workers steal from each other.
	WorkSteal Policy = "worksteal"
	// Priority: one queue ordered by task priority, with aging.
	Priority Policy = "priority"
	// TimeSlice: one FIFO queue; a task woken during its poll may be
	// re-polled at once by the same worker, Slice times in a row.
	TimeSlice Policy = "timeslice"
	// Retry: one FIFO queue; a task whose future fails is re-run from a
	// fresh future, at most Retries times.
	Retry Policy = "retry"
)

// Policies lists the policies.
var Policies = []Policy{FIFO, WorkSteal, Priority, TimeSlice, Retry}

// Config is one configuration of the model: the policy's parameters and the
// workload (how many tasks, what their futures do). The zero Config is
// valid: the work-stealing policy of the reference, two workers, three tasks
// that are Ready at their first poll.
type Config struct {
	Policy  Policy // "" means WorkSteal
	Workers int    // W ≥ 1; 0 means 2
	Tasks   int    // T ≥ 1; 0 means 3

	// The futures. Each task returns Pending Pendings times, then Ready;
	// Endless futures return Pending forever and are woken again after
	// every poll (for fairness). Wakes is how many times the event source
	// may call a registered waker (0 means 2): the second wake of a
	// registration is the one that a lost-wakeup bug can drop.
	Pendings int
	Endless  bool
	Wakes    int

	// Work stealing. LocalCap is the capacity of each worker's local deque
	// (0 means 2 for WorkSteal; other policies have no local queues). The
	// owner pops the tail (LIFO) unless OwnerFIFO; thieves take from the
	// head, one task or, with StealHalf, half of the victim's tasks (the
	// first is run, the rest go to the thief's own deque). With
	// GlobalInterval N > 0, every Nth take of a worker looks at the global
	// queue first.
	LocalCap       int
	OwnerFIFO      bool
	StealHalf      bool
	GlobalInterval int

	// StealLast, with StealHalf: a thief takes a batch of 1 to half of
	// the victim's tasks from its head and runs the last one; the ones
	// before it go to the thief's own deque, in order (crossbeam-deque's
	// batch steal from a LIFO deque, which takes the tasks one at a time
	// and runs the last it took). The batch's length is the run task's
	// place in the victim's queue, one step per length.
	StealLast bool

	// StealMax, with StealHalf: a batch takes at most StealMax tasks, the
	// one run included (crossbeam-deque's MAX_BATCH, 32); 0 means no cap
	// beyond half.
	StealMax int

	// Priority: Priorities[t-1] is task t's priority (higher runs first); nil
	// means task t has priority t-1. A queued task that has been passed over
	// Aging times runs before any task that has not; 0 means no aging.
	Priorities []int
	Aging      int

	// TimeSlice: how many times in a row a worker may re-poll a task that
	// was woken during its poll before it re-queues it.
	Slice int

	// Retry: the first Failures attempts of each task fail instead of
	// returning Ready; a failed task is re-run from a fresh future at most
	// Retries times. A future that finished is never polled again.
	Retries  int
	Failures int

	// Variant selects a deliberately broken rule; the zero value is the
	// correct model.
	Variant Variant
}

// Normalized returns c with every default filled in and the policy's
// presets applied. It does not validate; see Validate.
func (c Config) Normalized() Config {
	if c.Policy == "" {
		c.Policy = WorkSteal
	}
	if c.Workers == 0 {
		c.Workers = 2
	}
	if c.Tasks == 0 {
		c.Tasks = 3
	}
	if c.Wakes == 0 {
		c.Wakes = 2
	}
	switch c.Policy {
	case WorkSteal:
		if c.LocalCap == 0 {
			c.LocalCap = 2
		}
	default:
		c.LocalCap = 0
	}
	switch c.Policy {
	case Priority:
		if c.Priorities == nil {
			c.Priorities = make([]int, c.Tasks)
			for i := range c.Priorities {
				c.Priorities[i] = i
			}
		}
		if c.Variant == NoAging {
			c.Aging = 0
		} else if c.Aging == 0 {
			c.Aging = 2
		}
	case TimeSlice:
		if c.Slice == 0 {
			c.Slice = 1
		}
	case Retry:
		if c.Retries == 0 {
			c.Retries = 1
		}
		if c.Failures == 0 {
			c.Failures = 1
		}
	}
	return c
}

// Limits of a configuration: the packed state uses small fields.
const (
	MaxWorkers = 15
	MaxTasks   = 63
)

// Validate reports what is wrong with the normalized configuration, if
// anything.
func (c Config) Validate() error {
	n := c.Normalized()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !n.Policy.valid() {
		bad("unknown policy %q (want one of %s)", c.Policy, policyList())
	}
	if n.Workers < 1 || n.Workers > MaxWorkers {
		bad("workers = %d: want 1..%d", c.Workers, MaxWorkers)
	}
	if n.Tasks < 1 || n.Tasks > MaxTasks {
		bad("tasks = %d: want 1..%d", c.Tasks, MaxTasks)
	}
	if n.Pendings < 0 || n.Pendings > 15 {
		bad("pendings = %d: want 0..15", c.Pendings)
	}
	if n.Wakes < 1 || n.Wakes > 15 {
		bad("wakes = %d: want 1..15", c.Wakes)
	}
	if n.LocalCap < 0 || n.LocalCap > 15 {
		bad("local-cap = %d: want 0..15", c.LocalCap)
	}
	if n.StealMax < 0 {
		bad("steal-max = %d: want 0 (no cap) or more", c.StealMax)
	}
	if n.GlobalInterval < 0 || n.GlobalInterval > 255 {
		bad("global-interval = %d: want 0..255", c.GlobalInterval)
	}
	if n.Priorities != nil && len(n.Priorities) != n.Tasks {
		bad("priorities: %d given for %d tasks", len(n.Priorities), n.Tasks)
	}
	if n.Aging < 0 || n.Aging > 255 || n.Slice < 0 || n.Slice > 255 || n.Retries < 0 || n.Retries > 15 || n.Failures < 0 || n.Failures > 15 {
		bad("aging, slice, retries and failures must be small non-negative numbers")
	}
	if n.Policy != WorkSteal && (n.Variant == StealOwnerEnd || n.Variant == OverflowDrop) {
		bad("variant %s needs the worksteal policy", n.Variant)
	}
	if n.Variant == NoAging && n.Policy != Priority {
		bad("variant %s needs the priority policy", n.Variant)
	}
	if !n.Variant.valid() {
		bad("unknown variant %q", string(n.Variant))
	}
	return errors.Join(errs...)
}

func (p Policy) valid() bool {
	for _, q := range Policies {
		if p == q {
			return true
		}
	}
	return false
}

func policyList() string {
	s := make([]string, len(Policies))
	for i, p := range Policies {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// Procs returns the number of processes of the configuration, for fairness:
// process 0 is the spawner, 1..W the workers, W+1..W+T the event source of
// each task.
func (c Config) Procs() int { return 1 + c.Workers + c.Tasks }

// String prints the configuration as the flags of `verify model` would.
func (c Config) String() string {
	n := c.Normalized()
	var b strings.Builder
	fmt.Fprintf(&b, "policy=%s workers=%d tasks=%d", n.Policy, n.Workers, n.Tasks)
	if n.Endless {
		b.WriteString(" endless")
	} else {
		fmt.Fprintf(&b, " pendings=%d", n.Pendings)
	}
	if n.Wakes != 2 {
		fmt.Fprintf(&b, " wakes=%d", n.Wakes)
	}
	if n.Policy == WorkSteal {
		fmt.Fprintf(&b, " local-cap=%d", n.LocalCap)
		if n.OwnerFIFO {
			b.WriteString(" owner-fifo")
		}
		if n.StealHalf {
			b.WriteString(" steal-half")
		}
		if n.StealHalf && n.StealLast {
			b.WriteString(" steal-last")
		}
		if n.StealHalf && n.StealMax > 0 {
			fmt.Fprintf(&b, " steal-max=%d", n.StealMax)
		}
		if n.GlobalInterval > 0 {
			fmt.Fprintf(&b, " global-interval=%d", n.GlobalInterval)
		}
	}
	if n.Policy == Priority {
		fmt.Fprintf(&b, " priorities=%v aging=%d", n.Priorities, n.Aging)
	}
	if n.Slice > 0 {
		fmt.Fprintf(&b, " slice=%d", n.Slice)
	}
	if n.Retries > 0 {
		fmt.Fprintf(&b, " retries=%d failures=%d", n.Retries, n.Failures)
	}
	if n.Variant != Correct {
		fmt.Fprintf(&b, " variant=%s", n.Variant)
	}
	return b.String()
}
