package properties

import (
	"fmt"
	"strings"

	"pgregory.net/rapid"
)

// WakeMode is how a Pending poll of a generated task is woken again.
type WakeMode uint8

// Wake modes. Every Pending poll arranges at least one wake, so a correct
// executor always completes a generated workload.
const (
	// WakeSelf: the future calls Wake inside its own Poll, before returning
	// Pending: a wake during the poll, on the polling goroutine (the
	// RUNNING → NOTIFIED case of WAKE).
	WakeSelf WakeMode = iota
	// WakeAsync: the future starts a goroutine inside Poll that wakes it; the
	// wake lands before, during or after the executor handles the return.
	WakeAsync
	// WakeAfter: a goroutine started as the last thing Poll does wakes the
	// task; usually the task is WAITING by then.
	WakeAfter
	numWakeModes
)

var wakeModeNames = [...]string{"self", "async", "after"}

func (m WakeMode) String() string {
	if int(m) < len(wakeModeNames) {
		return wakeModeNames[m]
	}
	return fmt.Sprintf("WakeMode(%d)", uint8(m))
}

// Step is one Pending poll of a generated task: what the poll does before
// it returns Pending.
type Step struct {
	Wake   WakeMode
	Clone  bool // wake through cx.Waker().Clone() instead of the waker itself
	Wakes  int  // how many times the task is woken (1 to 3): idempotence
	Yields int  // runtime.Gosched calls of the waking goroutine before it wakes (async and after modes)
	Poke   int  // number (from 1, in String order, modulo the number of tasks) of a task woken with its latest waker during this poll; 0 for none
	Spawn  []TaskSpec
}

// TaskSpec is the program of one generated task: one Pending poll per step,
// then a poll that returns Ready (or panics).
type TaskSpec struct {
	Steps    []Step
	Panic    bool // the last poll panics instead of returning Ready
	Fail     bool // the last poll returns Ready with an executor.Failed error instead of its value
	Priority int  // used when the executor is executor.Prioritized
}

// Endless is a task of a fairness workload: it is woken again after every
// poll until the workload stops it.
type Endless struct {
	// Next is the index of the endless task this one wakes at each poll:
	// itself for a self-wake, another for a ring of tasks waking each other
	// (each task of a ring is woken only by its predecessor), or -1 for a
	// wake from another goroutine after each poll.
	Next     int
	Priority int
}

// Workload is one generated test case: the tasks spawned from outside (and
// the tasks they spawn), or the endless tasks of a fairness case, and how
// the case ends.
type Workload struct {
	Tasks      []TaskSpec
	Endless    []Endless
	Concurrent bool // half of the tasks are spawned from a second goroutine
	Shutdown   bool // the case ends with Close instead of Wait
	// EndlessPolls is how many polls each endless task gets before the
	// case ends (0 means 3).
	EndlessPolls int
}

// Size is the length of a workload as a counterexample: tasks, polls and
// wakes it contains. Shrinking makes it small.
func (w *Workload) Size() int {
	n := len(w.Endless)
	var walk func(ts []TaskSpec)
	walk = func(ts []TaskSpec) {
		for _, t := range ts {
			n += 1 + len(t.Steps)
			for _, s := range t.Steps {
				walk(s.Spawn)
			}
		}
	}
	walk(w.Tasks)
	return n
}

// String formats w compactly, one task per line, for logs and reports.
func (w *Workload) String() string {
	var b strings.Builder
	if w.Shutdown {
		b.WriteString("ends with Close\n")
	}
	if w.Concurrent {
		b.WriteString("spawned from two goroutines\n")
	}
	id := 0
	var walk func(ts []TaskSpec, indent string)
	walk = func(ts []TaskSpec, indent string) {
		for _, t := range ts {
			id++
			fmt.Fprintf(&b, "%stask %d", indent, id)
			if t.Priority != 0 {
				fmt.Fprintf(&b, " prio %d", t.Priority)
			}
			b.WriteString(":")
			for _, s := range t.Steps {
				b.WriteString(" pending(")
				b.WriteString(s.Wake.String())
				if s.Clone {
					b.WriteString(" clone")
				}
				if s.Wakes > 1 {
					fmt.Fprintf(&b, " x%d", s.Wakes)
				}
				if s.Yields > 0 {
					fmt.Fprintf(&b, " yield%d", s.Yields)
				}
				if s.Poke > 0 {
					fmt.Fprintf(&b, " poke#%d", s.Poke)
				}
				if len(s.Spawn) > 0 {
					fmt.Fprintf(&b, " spawn%d", len(s.Spawn))
				}
				b.WriteString(")")
			}
			if t.Panic {
				b.WriteString(" panic\n")
			} else if t.Fail {
				b.WriteString(" error\n")
			} else {
				b.WriteString(" ready\n")
			}
			for _, s := range t.Steps {
				walk(s.Spawn, indent+"  ")
			}
		}
	}
	walk(w.Tasks, "")
	for i, e := range w.Endless {
		switch {
		case e.Next == i:
			fmt.Fprintf(&b, "endless %d: wakes itself", i)
		case e.Next < 0:
			fmt.Fprintf(&b, "endless %d: woken from outside", i)
		default:
			fmt.Fprintf(&b, "endless %d: wakes endless %d", i, e.Next)
		}
		if e.Priority != 0 {
			fmt.Fprintf(&b, " prio %d", e.Priority)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Shape says which workloads a property draws. The zero Shape draws small
// workloads of tasks woken in every mode.
type Shape struct {
	MaxTasks   int        // tasks spawned from outside; 0 means 6
	MaxPending int        // Pending polls per task; 0 means 3
	Modes      []WakeMode // wake modes to draw from; nil means all
	Clone      int        // 0: sometimes wake through a clone; 1: never; 2: always
	Repeat     bool       // repeated wakes, and wakes of other tasks (pokes)
	Spawn      bool       // tasks spawn tasks
	Panics     bool       // some tasks panic, and some finish with an error (executor.Failed)
	Shutdown   bool       // end with Close instead of Wait
	Endless    bool       // a fairness workload of endless tasks
	Priorities bool       // tasks draw priorities 0..3
	// EndlessPolls, for an endless workload, is how many polls each task
	// gets before the case ends (0 means 3): more makes longer runs.
	EndlessPolls int
}

// Draw generates one workload of shape s from t.
func (s Shape) Draw(t *rapid.T) *Workload {
	if s.Endless {
		return s.drawEndless(t)
	}
	maxTasks := s.MaxTasks
	if maxTasks == 0 {
		maxTasks = 6
	}
	w := &Workload{Shutdown: s.Shutdown}
	n := rapid.IntRange(1, maxTasks).Draw(t, "tasks")
	total := n // tasks counted with the children they spawn
	for i := 0; i < n; i++ {
		w.Tasks = append(w.Tasks, s.drawTask(t, fmt.Sprintf("task%d", i), &total, true))
	}
	if n > 1 {
		w.Concurrent = rapid.Bool().Draw(t, "concurrent")
	}
	return w
}

func (s Shape) drawTask(t *rapid.T, label string, total *int, top bool) TaskSpec {
	maxPending := s.MaxPending
	if maxPending == 0 {
		maxPending = 3
	}
	modes := s.Modes
	if modes == nil {
		modes = []WakeMode{WakeSelf, WakeAsync, WakeAfter}
	}
	var ts TaskSpec
	k := rapid.IntRange(0, maxPending).Draw(t, label+".pending")
	for j := 0; j < k; j++ {
		l := fmt.Sprintf("%s.%d", label, j)
		st := Step{Wakes: 1}
		st.Wake = rapid.SampledFrom(modes).Draw(t, l+".wake")
		switch s.Clone {
		case 0:
			st.Clone = rapid.Bool().Draw(t, l+".clone")
		case 2:
			st.Clone = true
		}
		if st.Wake != WakeSelf {
			st.Yields = rapid.IntRange(0, 3).Draw(t, l+".yields")
		}
		if s.Repeat {
			st.Wakes = rapid.IntRange(1, 3).Draw(t, l+".wakes")
			st.Poke = rapid.IntRange(0, 8).Draw(t, l+".poke")
		}
		if s.Spawn && top {
			c := rapid.IntRange(0, 6).Draw(t, l+".spawn")
			for x := 0; x < c; x++ {
				*total++
				st.Spawn = append(st.Spawn, s.drawTask(t, fmt.Sprintf("%s.child%d", l, x), total, false))
			}
		}
		ts.Steps = append(ts.Steps, st)
	}
	if s.Panics {
		ts.Panic = rapid.IntRange(0, 3).Draw(t, label+".panic") == 0
		if !ts.Panic {
			ts.Fail = rapid.IntRange(0, 3).Draw(t, label+".error") == 0
		}
	}
	if s.Priorities {
		ts.Priority = rapid.IntRange(0, 3).Draw(t, label+".priority")
	}
	return ts
}

// drawEndless draws a fairness workload: endless tasks grouped in rings
// (a ring of one wakes itself) and tasks woken from outside.
func (s Shape) drawEndless(t *rapid.T) *Workload {
	w := &Workload{EndlessPolls: s.EndlessPolls}
	groups := rapid.IntRange(1, 3).Draw(t, "groups")
	for g := 0; g < groups; g++ {
		kind := rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("group%d.kind", g))
		prio := 0
		if s.Priorities {
			prio = rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("group%d.priority", g))
		}
		start := len(w.Endless)
		switch kind {
		case 0: // wakes itself
			w.Endless = append(w.Endless, Endless{Next: start, Priority: prio})
		case 1: // woken from outside
			w.Endless = append(w.Endless, Endless{Next: -1, Priority: prio})
		case 2: // a ring
			size := rapid.IntRange(2, 3).Draw(t, fmt.Sprintf("group%d.ring", g))
			for i := 0; i < size; i++ {
				w.Endless = append(w.Endless, Endless{Next: start + (i+1)%size, Priority: prio})
			}
		}
	}
	return w
}
