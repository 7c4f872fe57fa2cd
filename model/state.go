package model

import (
	"fmt"
	"slices"
	"strings"
)

// State is one state of the executor: every task's state, every queue, every
// worker. Tasks are numbered from 1; slices indexed by task hold task t at
// index t-1. Queues hold task ids, head first.
//
// The fields are those of the reference semantics (the anchors'
// SEMANTICS.md): Task, Pend, Wakes, Polled, Cur, Global, Local and Spawned.
// The others are zero unless the configuration uses them, so they add no
// states to a configuration that does not.
//
// The zero State is not usable; get one from Model.Init. A State is not safe
// for concurrent use; CopyFrom copies one without allocating once the
// destination has grown to size.
type State struct {
	Task   []TaskState // st: each task's state
	Pend   []uint8     // npend: Pending results returned by the current future
	Wakes  []uint8     // ev: wakes the event source may still make on the current registration
	Polled []bool      // pl: the future returned Pending in this poll; the poll has not returned yet
	Age    []uint8     // priority: times a queued task was passed over
	Tries  []uint8     // retry: failed attempts so far

	Cur    []int32   // per worker: the task it polls, 0 = idle
	Tick   []uint8   // per worker: takes since its last global-first check (GlobalInterval)
	Slice  []uint8   // per worker: re-polls in the current time slice
	Steal  []int32   // per worker: a task read but not yet taken by a two-step steal (StealOwnerEnd)
	Victim []int8    // per worker: the victim of that steal
	Global []int32   // the global queue, head first
	Local  [][]int32 // per worker: the local deque, head (steal end) first, tail (owner end) last

	Spawned int // tasks spawned so far (tasks are spawned in order 1..T)
}

func newState(workers, tasks int) *State {
	// Every slice is carved from a few blocks, one per element type, each
	// with room for every queue to hold every task and padded on either side
	// by more than a cache line: the States of different goroutines (the
	// parallel explorer's, written on every transition) then never share a
	// cache line, and one State's fields sit together. A queue that grows
	// longer (a broken variant) just reallocates.
	t8, u8, b8, i8 := carve[TaskState](tasks), carve[uint8](6*tasks+2*workers), carve[bool](tasks), carve[int8](workers)
	i32 := carve[int32](2*workers + tasks + workers*tasks)
	s := &new(padState).s
	*s = State{
		Task:   t8(tasks, tasks),
		Pend:   u8(tasks, tasks),
		Wakes:  u8(tasks, tasks),
		Polled: b8(tasks, tasks),
		Age:    u8(tasks, tasks),
		Tries:  u8(tasks, tasks),
		Cur:    i32(workers, workers),
		Tick:   u8(workers, workers),
		Slice:  u8(workers, workers),
		Steal:  i32(workers, workers),
		Victim: i8(workers, workers),
		Global: i32(0, tasks),
		Local:  carve[[]int32](workers)(workers, workers),
	}
	for w := range s.Local {
		s.Local[w] = i32(0, tasks)
	}
	return s
}

// padState keeps a State's own fields (its slice headers, written on every
// copy) off the cache lines of the States allocated next to it.
type padState struct {
	_ [64]byte
	s State
	_ [64]byte
}

// carve returns a function that hands out consecutive slices of length k
// and capacity c from one block of n elements padded by 64 elements on
// either side.
func carve[T any](n int) func(k, c int) []T {
	const pad = 64
	buf := make([]T, pad+n+pad)
	off := pad
	return func(k, c int) []T {
		s := buf[off : off+k : off+c]
		off += c
		return s
	}
}

// growTasks makes room for tasks 1..n.
func (s *State) growTasks(n int) {
	for len(s.Task) < n {
		s.Task = append(s.Task, Idle)
		s.Pend = append(s.Pend, 0)
		s.Wakes = append(s.Wakes, 0)
		s.Polled = append(s.Polled, false)
		s.Age = append(s.Age, 0)
		s.Tries = append(s.Tries, 0)
	}
}

// Clone returns a deep copy of s.
func (s *State) Clone() *State {
	c := &State{}
	c.CopyFrom(s)
	return c
}

// CopyFrom makes s a deep copy of src, reusing s's storage.
func (s *State) CopyFrom(src *State) {
	s.Task = append(s.Task[:0], src.Task...)
	s.Pend = append(s.Pend[:0], src.Pend...)
	s.Wakes = append(s.Wakes[:0], src.Wakes...)
	s.Polled = append(s.Polled[:0], src.Polled...)
	s.Age = append(s.Age[:0], src.Age...)
	s.Tries = append(s.Tries[:0], src.Tries...)
	s.Cur = append(s.Cur[:0], src.Cur...)
	s.Tick = append(s.Tick[:0], src.Tick...)
	s.Slice = append(s.Slice[:0], src.Slice...)
	s.Steal = append(s.Steal[:0], src.Steal...)
	s.Victim = append(s.Victim[:0], src.Victim...)
	s.Global = append(s.Global[:0], src.Global...)
	if cap(s.Local) < len(src.Local) {
		s.Local = make([][]int32, len(src.Local))
	}
	s.Local = s.Local[:len(src.Local)]
	for w := range src.Local {
		s.Local[w] = append(s.Local[w][:0], src.Local[w]...)
	}
	s.Spawned = src.Spawned
}

// Equal reports whether s and o are the same state.
func (s *State) Equal(o *State) bool {
	if s.Spawned != o.Spawned || len(s.Local) != len(o.Local) {
		return false
	}
	for w := range s.Local {
		if !slices.Equal(s.Local[w], o.Local[w]) {
			return false
		}
	}
	return slices.Equal(s.Task, o.Task) && slices.Equal(s.Pend, o.Pend) && slices.Equal(s.Wakes, o.Wakes) &&
		slices.Equal(s.Polled, o.Polled) && slices.Equal(s.Age, o.Age) && slices.Equal(s.Tries, o.Tries) &&
		slices.Equal(s.Cur, o.Cur) && slices.Equal(s.Tick, o.Tick) && slices.Equal(s.Slice, o.Slice) &&
		slices.Equal(s.Steal, o.Steal) && slices.Equal(s.Victim, o.Victim) && slices.Equal(s.Global, o.Global)
}

// AllDone reports whether every task is DONE.
func (s *State) AllDone() bool {
	for _, st := range s.Task {
		if st != Done {
			return false
		}
	}
	return true
}

// WorkerOf returns the worker polling task t, or -1.
func (s *State) WorkerOf(t int) int {
	for w, c := range s.Cur {
		if int(c) == t {
			return w
		}
	}
	return -1
}

// Doing says what worker w is doing: "polls tN", "stealing tN from wV"
// or "idle".
func (s *State) Doing(w int) string {
	switch {
	case s.Cur[w] != 0:
		return fmt.Sprintf("polls t%d", s.Cur[w])
	case s.Steal[w] != 0:
		return fmt.Sprintf("stealing t%d from w%d", s.Steal[w], s.Victim[w])
	}
	return "idle"
}

// String prints the state as lanes: the global queue, one line per worker
// with its local queue, then every task that is not IDLE.
func (s *State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "global %s\n", queueString(s.Global))
	for w := range s.Cur {
		fmt.Fprintf(&b, "w%d %s  local %s\n", w, s.Doing(w), queueString(s.Local[w]))
	}
	b.WriteString("tasks")
	for i, st := range s.Task {
		if st == Idle {
			continue
		}
		fmt.Fprintf(&b, " t%d:%s", i+1, st)
		if s.Pend[i] > 0 {
			fmt.Fprintf(&b, "/pend=%d", s.Pend[i])
		}
		if s.Wakes[i] > 0 {
			fmt.Fprintf(&b, "/wakes=%d", s.Wakes[i])
		}
		if s.Polled[i] {
			b.WriteString("/registered")
		}
		if s.Age[i] > 0 {
			fmt.Fprintf(&b, "/age=%d", s.Age[i])
		}
		if s.Tries[i] > 0 {
			fmt.Fprintf(&b, "/failed=%d", s.Tries[i])
		}
	}
	if s.Spawned < len(s.Task) {
		fmt.Fprintf(&b, " (%d not spawned)", len(s.Task)-s.Spawned)
	}
	return b.String()
}

func queueString(q []int32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, t := range q {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "t%d", t)
	}
	b.WriteByte(']')
	return b.String()
}
