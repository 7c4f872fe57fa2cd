package pool

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"pgregory.net/rapid"
)

// Work is what a task does while it runs.
type Work uint8

// Kinds of work. Sleeping tasks overlap in time, which is what shows a
// capacity violation; spinning and yielding tasks keep the CPUs busy and
// shake the Go scheduler.
const (
	WorkNone  Work = iota // return at once
	WorkSpin              // a busy loop of Amount iterations
	WorkYield             // Amount calls of runtime.Gosched
	WorkSleep             // sleep Amount microseconds
	// WorkGoexit calls runtime.Goexit, as t.FailNow and gomock do inside
	// a task: the task ends without returning. Only with Config.Goexit.
	WorkGoexit
)

func (w Work) String() string {
	switch w {
	case WorkNone:
		return "none"
	case WorkSpin:
		return "spin"
	case WorkYield:
		return "yield"
	case WorkSleep:
		return "sleep"
	case WorkGoexit:
		return "goexit"
	}
	return fmt.Sprintf("work(%d)", w)
}

// Task is one generated task.
type Task struct {
	Work     Work
	Amount   int
	Children int // tasks it submits from inside the pool (Config.Nested)
}

// Workload is one test case: Tasks are submitted round-robin by Submitters
// goroutines that start together; then Close is called (or, with
// CloseEarly, Close races with the submitters).
type Workload struct {
	Submitters int
	Tasks      []Task
	CloseEarly bool
}

func (w Workload) String() string {
	var b strings.Builder
	n, nested := len(w.Tasks), 0
	for _, t := range w.Tasks {
		nested += t.Children
	}
	fmt.Fprintf(&b, "%d tasks (+%d nested) from %d submitters", n, nested, w.Submitters)
	goexits := 0
	for _, t := range w.Tasks {
		if t.Work == WorkGoexit {
			goexits++
		}
	}
	if goexits > 0 {
		fmt.Fprintf(&b, ", %d calling runtime.Goexit", goexits)
	}
	if w.CloseEarly {
		b.WriteString(", Close racing the submitters")
	}
	return b.String()
}

func (w Workload) total() int {
	n := len(w.Tasks)
	for _, t := range w.Tasks {
		n += t.Children
	}
	return n
}

// Draw draws a Workload within cfg's bounds from a rapid test. It shrinks
// towards fewer tasks, fewer submitters and no work.
func Draw(t *rapid.T, cfg Config) Workload {
	cfg = cfg.withDefaults()
	w := Workload{Submitters: rapid.IntRange(1, cfg.MaxSubmitters).Draw(t, "submitters")}
	n := rapid.IntRange(0, cfg.MaxTasks).Draw(t, "tasks")
	kinds := rapid.IntRange(0, int(WorkSleep))
	amount := rapid.IntRange(0, 200)
	children := rapid.IntRange(0, 2)
	for range n {
		task := Task{Work: Work(kinds.Draw(t, "work")), Amount: amount.Draw(t, "amount")}
		if cfg.Goexit && rapid.IntRange(0, 9).Draw(t, "goexit") == 9 {
			task.Work = WorkGoexit
		}
		if cfg.Nested {
			task.Children = children.Draw(t, "children")
		}
		w.Tasks = append(w.Tasks, task)
	}
	if cfg.CloseEarly {
		w.CloseEarly = rapid.Bool().Draw(t, "close early")
	}
	return w
}

// Generate makes a Workload within cfg's bounds from r.
func Generate(r *rand.Rand, cfg Config) Workload {
	cfg = cfg.withDefaults()
	w := Workload{Submitters: 1 + r.IntN(cfg.MaxSubmitters)}
	n := r.IntN(cfg.MaxTasks + 1)
	for range n {
		task := Task{Work: Work(r.IntN(int(WorkSleep) + 1)), Amount: r.IntN(201)}
		if cfg.Goexit && r.IntN(10) == 9 {
			task.Work = WorkGoexit
		}
		if cfg.Nested {
			task.Children = r.IntN(3)
		}
		w.Tasks = append(w.Tasks, task)
	}
	w.CloseEarly = cfg.CloseEarly && r.IntN(2) == 0
	return w
}

// spinSink keeps the busy loop from being optimised away.
var spinSink atomic.Int64

func (t Task) do() {
	switch t.Work {
	case WorkSpin:
		x := 0
		for i := range t.Amount * 20 {
			x += i
		}
		spinSink.Store(int64(x))
	case WorkYield:
		for range t.Amount / 20 {
			runtime.Gosched()
		}
	case WorkSleep:
		time.Sleep(time.Duration(t.Amount) * time.Microsecond)
	case WorkGoexit:
		runtime.Goexit()
	}
}
