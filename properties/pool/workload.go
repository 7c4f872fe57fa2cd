package pool

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/execspec/execspec/instrument/rt"
)

// Work is what a task does while it runs.
type Work uint8

// Kinds of work. Sleeping tasks overlap in time, which is what shows a
// capacity violation; spinning and yielding tasks keep the CPUs busy and
// shake the Go scheduler; holding tasks keep a worker busy long enough for
// submitters to block behind them (what a lost wakeup needs).
const (
	WorkNone  Work = iota // return at once
	WorkSpin              // a busy loop of Amount iterations
	WorkYield             // Amount/20 calls of runtime.Gosched
	WorkSleep             // sleep Amount microseconds
	// WorkGoexit calls runtime.Goexit, as t.FailNow and gomock do inside
	// a task: the task ends without returning. Only with Config.Goexit.
	WorkGoexit
	// WorkPanic panics with a TaskPanic. Only with Config.Panics.
	WorkPanic
	// WorkError returns a *TaskError (through an ErrorSubmitter; a plain
	// Submit ignores it).
	WorkError
	// WorkHold sleeps Amount milliseconds.
	WorkHold
)

var workNames = [...]string{"none", "spin", "yield", "sleep", "goexit", "panic", "error", "hold"}

func (w Work) String() string {
	if int(w) < len(workNames) {
		return workNames[w]
	}
	return fmt.Sprintf("work(%d)", w)
}

// Task is one generated task.
type Task struct {
	Work     Work
	Amount   int
	Children int // tasks it submits from inside the pool (Config.Nested)
}

// TaskPanic is the value a WorkPanic task panics with.
type TaskPanic struct{ ID int }

func (p TaskPanic) String() string { return fmt.Sprintf("execspec task panic (task %d)", p.ID) }

// TaskError is the error a WorkError task returns.
type TaskError struct{ ID int }

func (e *TaskError) Error() string { return fmt.Sprintf("execspec task error (task %d)", e.ID) }

// OpKind is an operation of a workload.
type OpKind uint8

const (
	// OpSubmit submits Task (with SubmitErr when the task returns an error
	// and the pool is an ErrorSubmitter).
	OpSubmit OpKind = iota
	// OpSubmitContext submits Task with a context cancelled CancelAfter
	// microseconds after the call (0: before it; -1: never), through
	// SubmitWeighted with Weight when the pool is a WeightedSubmitter,
	// else through SubmitContext.
	OpSubmitContext
	// OpResize resizes the pool to Size.
	OpResize
	// OpCancel cancels the pool's context.
	OpCancel
)

// Op is one operation of a workload.
type Op struct {
	Kind        OpKind
	Task        Task
	Weight      int
	CancelAfter int
	Size        int
	// Delay is how long (µs) the goroutine that runs Resize and Cancel
	// sleeps before this one, from the round's start or its previous one.
	Delay int
}

func (o Op) String() string {
	switch o.Kind {
	case OpResize:
		return fmt.Sprintf("Resize(%d)@%dµs", o.Size, o.Delay)
	case OpCancel:
		return fmt.Sprintf("Cancel@%dµs", o.Delay)
	case OpSubmitContext:
		s := fmt.Sprintf("SubmitContext(%s", o.Task.Work)
		if o.Weight > 1 {
			s += fmt.Sprintf(", weight %d", o.Weight)
		}
		switch {
		case o.CancelAfter == 0:
			s += ", cancelled before"
		case o.CancelAfter > 0:
			s += fmt.Sprintf(", cancelled after %dµs", o.CancelAfter)
		}
		return s + ")"
	}
	return "Submit(" + o.Task.Work.String() + ")"
}

// Round is the operations submitters run concurrently between two Waits;
// submitting operation i goes to submitter i mod Submitters, and Resize
// and Cancel, in order, to one more goroutine that sleeps each one's
// Delay first.
type Round struct{ Ops []Op }

// Workload is one test case: the pool's configuration and the rounds of
// operations that Submitters goroutines run together. Between two rounds
// the pool is waited for (Waiter: reuse); after the last, it is closed
// (or, with CloseEarly, Close races with the last round).
type Workload struct {
	Options    Options
	Submitters int
	Rounds     []Round
	CloseEarly bool
}

func (w Workload) String() string {
	var b strings.Builder
	count := map[string]int{}
	tasks, nested := 0, 0
	for _, r := range w.Rounds {
		for _, op := range r.Ops {
			switch op.Kind {
			case OpResize:
				count["Resize"]++
				continue
			case OpCancel:
				count["Cancel"]++
				continue
			case OpSubmitContext:
				count["SubmitContext"]++
				if op.CancelAfter >= 0 {
					count["cancelled"]++
				}
			}
			tasks++
			nested += op.Task.Children
			switch op.Task.Work {
			case WorkGoexit, WorkPanic, WorkError, WorkHold:
				count[op.Task.Work.String()]++
			}
		}
	}
	fmt.Fprintf(&b, "%d tasks (+%d nested) from %d submitters", tasks, nested, w.Submitters)
	if len(w.Rounds) > 1 {
		fmt.Fprintf(&b, " in %d rounds (Wait between)", len(w.Rounds))
	}
	for _, k := range []string{"SubmitContext", "cancelled", "Resize", "Cancel", "goexit", "panic", "error", "hold"} {
		if count[k] > 0 {
			fmt.Fprintf(&b, ", %d %s", count[k], k)
		}
	}
	if w.CloseEarly {
		b.WriteString(", Close racing the submitters")
	}
	if n := w.opCount(); n <= 12 {
		var ops []string
		for ri, r := range w.Rounds {
			if ri > 0 {
				ops = append(ops, "Wait")
			}
			for _, op := range r.Ops {
				ops = append(ops, op.String())
			}
		}
		fmt.Fprintf(&b, ": %s", strings.Join(ops, " "))
	}
	return b.String()
}

func (w Workload) opCount() int {
	n := 0
	for _, r := range w.Rounds {
		n += len(r.Ops)
	}
	return n
}

// tasks numbers the tasks of w: top-level ids follow the operations in
// order (an operation that submits nothing keeps its id unused), nested
// ids follow.
func (w Workload) layout() (ops int, children []int, total int) {
	for _, r := range w.Rounds {
		ops += len(r.Ops)
	}
	total = ops
	children = make([]int, ops)
	i := 0
	for _, r := range w.Rounds {
		for _, op := range r.Ops {
			children[i] = total
			if op.Kind == OpSubmit || op.Kind == OpSubmitContext {
				total += op.Task.Children
			}
			i++
		}
	}
	return ops, children, total
}

// Generate makes a Workload within cfg's bounds from r, for a pool with
// the abilities ab: it draws the operations and task kinds the pool can
// take, and the pool's Options from cfg.Space.
func generate(r *rand.Rand, cfg Config, ab abilities) Workload {
	w := Workload{Options: drawOptions(r, cfg)}
	n := drawSize(r, cfg.MaxTasks)
	// As many submitters as the size keeps busy: up to one per 16 tasks
	// (at least 4, where allowed), so that a small case is not mostly
	// goroutines.
	w.Submitters = 1 + r.IntN(min(cfg.MaxSubmitters, max(4, n/16)))
	capacity := w.Options.Capacity
	if capacity <= 0 {
		capacity = 4
	}
	rounds := 1
	if ab.wait != nil {
		rounds += r.IntN(3)
	}
	holds := 0
	cancelled := false
	w.Rounds = make([]Round, 0, rounds)
	for ri := range rounds {
		m := n / rounds
		if ri == rounds-1 {
			m = n - (rounds-1)*(n/rounds)
		}
		var round Round
		if m > 0 { // none stays nil, as the JSON of a saved case has it
			round.Ops = make([]Op, 0, m)
		}
		for range m {
			if ab.resize != nil && r.IntN(10) == 0 {
				// A weighted pool never shrinks below the heaviest weight
				// drawn: a waiter that can never fit is the caller's bug.
				lo := 1
				if ab.weighted != nil {
					lo = capacity
				}
				round.Ops = append(round.Ops, Op{Kind: OpResize, Size: lo + r.IntN(2*capacity-lo+1), Delay: delay(r)})
				continue
			}
			if ab.cancel != nil && !cancelled && ri == rounds-1 && r.IntN(4*m+1) == 0 {
				cancelled = true
				round.Ops = append(round.Ops, Op{Kind: OpCancel, Delay: delay(r)})
				continue
			}
			op := Op{Kind: OpSubmit, CancelAfter: -1, Weight: 1}
			if (ab.ctx != nil || ab.weighted != nil) && (ab.weighted != nil || r.IntN(3) == 0) {
				op.Kind = OpSubmitContext
				switch r.IntN(4) {
				case 0:
					op.CancelAfter = 0
				case 1, 2:
					op.CancelAfter = 1 + r.IntN(2000)
				}
				if ab.weighted != nil {
					op.Weight = 1 + r.IntN(capacity)
				}
			}
			op.Task = drawTask(r, cfg, ab, &holds)
			round.Ops = append(round.Ops, op)
		}
		// Lost wakeups need submitters blocked behind a busy pool when
		// the capacity grows or a waiter gives up: a third of the rounds
		// of a pool with such abilities begin with a holding task.
		if ab.resize != nil || ab.ctx != nil || ab.weighted != nil || ab.cancel != nil {
			if i := slices.IndexFunc(round.Ops, func(o Op) bool { return o.Kind == OpSubmit || o.Kind == OpSubmitContext }); i >= 0 && r.IntN(3) == 0 {
				round.Ops[i].Task.Work, round.Ops[i].Task.Amount = WorkHold, 60+r.IntN(61)
				round.Ops[i].CancelAfter = -1
			}
		}
		w.Rounds = append(w.Rounds, round)
	}
	w.CloseEarly = cfg.CloseEarly && r.IntN(2) == 0
	return w
}

// drawSize draws a case's number of tasks below max, skewed to the small:
// a bound of max/8, max/4, max/2 or max, each as likely, and a size
// uniform up to it (Config.MaxTasks says why).
func drawSize(r *rand.Rand, max int) int {
	bound := max >> (3 - r.IntN(4))
	return r.IntN(bound + 1)
}

// delay draws the Delay of a Resize or Cancel: mostly within the first
// half millisecond, when submitters are busiest, sometimes up to 5ms.
func delay(r *rand.Rand) int {
	if r.IntN(3) == 0 {
		return r.IntN(5000)
	}
	return r.IntN(500)
}

func drawTask(r *rand.Rand, cfg Config, ab abilities, holds *int) Task {
	t := Task{Work: Work(r.IntN(int(WorkSleep) + 1))}
	switch t.Work {
	case WorkSleep:
		t.Amount = r.IntN(1001)
	default:
		t.Amount = r.IntN(201)
	}
	switch {
	case cfg.Goexit && r.IntN(10) == 0:
		t.Work = WorkGoexit
	case cfg.Panics != PanicsCrash && r.IntN(10) == 0:
		t.Work = WorkPanic
	case ab.errs != nil && r.IntN(6) == 0:
		t.Work = WorkError
	case *holds < 2 && r.IntN(30) == 0:
		*holds++
		t.Work, t.Amount = WorkHold, 60+r.IntN(141)
	}
	if cfg.Nested {
		t.Children = r.IntN(3)
	}
	return t
}

func drawOptions(r *rand.Rand, cfg Config) Options {
	s := cfg.Space
	o := Options{Capacity: cfg.Capacity}
	between := func(lo, hi int) int {
		if hi <= lo {
			return lo
		}
		// Small values first: half the cases take the lower quarter.
		if r.IntN(2) == 0 {
			hi = lo + (hi-lo)/4
		}
		return lo + r.IntN(hi-lo+1)
	}
	if s.Capacity[1] > 0 {
		o.Capacity = between(s.Capacity[0], s.Capacity[1])
	}
	if s.QueueBound[1] > 0 {
		o.QueueBound = between(s.QueueBound[0], s.QueueBound[1])
	}
	if s.IdleTimeout[1] > 0 {
		lo, hi := s.IdleTimeout[0], s.IdleTimeout[1]
		o.IdleTimeout = lo + time.Duration(r.Int64N(int64(hi-lo)+1))
	}
	o.Nonblocking = s.Nonblocking && r.IntN(4) == 0
	return o
}

// spinSink keeps the busy loop from being optimised away.
var spinSink atomic.Int64

// do runs the task's work; id names its panic and its error.
func (t Task) do(id int) error {
	switch t.Work {
	case WorkSpin:
		x := 0
		for i := range t.Amount * 20 {
			x += i
		}
		spinSink.Store(int64(x))
	case WorkYield:
		for range t.Amount / 20 {
			rt.Gosched()
		}
	case WorkSleep:
		rt.Sleep(time.Duration(t.Amount) * time.Microsecond)
	case WorkHold:
		rt.Sleep(time.Duration(t.Amount) * time.Millisecond)
	case WorkGoexit:
		runtime.Goexit()
	case WorkPanic:
		panic(TaskPanic{id})
	case WorkError:
		return &TaskError{id}
	}
	return nil
}
