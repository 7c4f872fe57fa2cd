package workers

import (
	"slices"
	"sync"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/internal/goid"
)

// Log is what the suite knows of the goroutines that ran a case's tasks
// (under control): the task each ran last, and the instants of the idle
// expiries and retirements among their exits. Its methods are called on
// the goroutine that runs a task, as the task starts and ends; safe for
// concurrent use.
type Log struct {
	mu      sync.Mutex
	on      map[uintptr]*rec // by goroutine (goid.Curg), while it lives
	idle    []int64          // the instants of idle expiries
	retired []int64          // the instants of retirements
}

type rec struct {
	task  int
	ended bool  // its last task has ended
	endAt int64 // the case's clock then (End's clock)
	house int   // rt.HousekeepingSteps then
}

// Exit is what the suite says of a goroutine's exit, whose last task was
// task: the instant (its tracker's clock), whether the exit counts (that
// task returned, and the pool was not closing), and the case's clock less
// the time the schedule let pass early, to compare with the clock at the
// task's end.
type Exit func(task int) (at int64, counts bool, clock int64)

// Start notes that the calling goroutine starts task id; exit describes
// the goroutine's exit when it comes (rt.AtExit).
func (l *Log) Start(id int, exit Exit) {
	g := goid.Curg()
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.on[g]
	if r == nil {
		if l.on == nil {
			l.on = map[uintptr]*rec{}
		}
		r = &rec{}
		if !rt.AtExit(func() { l.exit(g, r, exit) }) {
			return
		}
		l.on[g] = r
	}
	r.task, r.ended = id, false
}

// End notes that task id ends on the calling goroutine, the case's clock
// (less the time let pass early) at clock.
func (l *Log) End(id int, clock int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.on[goid.Curg()]; r != nil && r.task == id {
		r.ended, r.endAt, r.house = true, clock, rt.HousekeepingSteps()
	}
}

// exit is called (rt.AtExit) as goroutine g, which ran tasks of the
// case, ends.
func (l *Log) exit(g uintptr, r *rec, exit Exit) {
	at, counts, clock := exit(r.task)
	l.mu.Lock()
	delete(l.on, g) // the descriptor may be reused once g is gone
	l.mu.Unlock()
	if r.ended && counts {
		// Nothing in between its task's end and its exit: it left after
		// its task.
		l.Exited(at, rt.HousekeepingSteps() == r.house && clock == r.endAt)
	}
}

// Exited records an exit at instant at: a retirement, or an idle expiry.
func (l *Log) Exited(at int64, retired bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if retired {
		l.retired = append(l.retired, at)
	} else {
		l.idle = append(l.idle, at)
	}
}

// Exits returns the instants of the case's idle expiries and of its
// retirements, each in order.
func (l *Log) Exits() (idle, retired []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	idle, retired = slices.Clone(l.idle), slices.Clone(l.retired)
	slices.Sort(idle)
	slices.Sort(retired)
	return idle, retired
}
