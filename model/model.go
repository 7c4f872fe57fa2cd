package model

import (
	"fmt"
	"slices"
)

// Model is the executable specification for one configuration: the initial
// state, the rules as premise-checked transitions, and the enumeration of
// every enabled rule instance. A Model is immutable and safe for concurrent
// use; the States it works on are not.
//
// A closed Model (New) knows the futures' programs and the event source's
// budget, so its state space is finite and can be explored. An open Model
// (NewOpen) is for checking recorded traces: the futures' results and the
// wakes come from the trace, tasks may have any ids, and any number of
// wakes may arrive.
type Model struct {
	cfg  Config
	open bool
}

// New returns the closed model of c.
func New(c Config) (*Model, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &Model{cfg: c.Normalized()}, nil
}

// NewOpen returns the open model of c, for trace conformance: c.Tasks, the
// programs and the wake budget are ignored.
func NewOpen(c Config) (*Model, error) {
	if c.Tasks == 0 {
		c.Tasks = 1
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &Model{cfg: c.Normalized(), open: true}, nil
}

// Config returns the normalized configuration.
func (m *Model) Config() Config { return m.cfg }

// Open reports whether m is an open model.
func (m *Model) Open() bool { return m.open }

// Init returns the initial state: no task spawned, every queue empty, every
// worker idle.
func (m *Model) Init() *State {
	if m.open {
		return newState(m.cfg.Workers, 0)
	}
	return newState(m.cfg.Workers, m.cfg.Tasks)
}

// Apply applies one rule instance to s. If a premise of the rule does not
// hold it returns a *PremiseError and leaves s as it was; in a closed model
// it also refuses steps the programs and the event source cannot take.
func (m *Model) Apply(s *State, st Step) error {
	if err := m.check(s, st); err != nil {
		return err
	}
	m.apply(s, st)
	return nil
}

// check tests the premise of st in s.
func (m *Model) check(s *State, st Step) error {
	c := &m.cfg
	t := st.Task
	if st.Rule != SPAWN && (t < 1 || t > len(s.Task)) {
		return premise(st, "task spawned", "no task t%d", t)
	}
	if st.Rule != SPAWN && st.Rule != WAKE && (st.Worker < 0 || st.Worker >= c.Workers) {
		return premise(st, "0 ≤ w < W", "no worker %d", st.Worker)
	}
	if (st.Rule == SPAWN || st.Rule == WAKE) && (st.Dest < Global || st.Dest >= c.Workers) {
		return premise(st, "destination queue exists", "no worker %d", st.Dest)
	}
	switch st.Rule {
	case SPAWN:
		if t < 1 {
			return premise(st, "task id ≥ 1", "task id %d", t)
		}
		if !m.open && t != s.Spawned+1 {
			return premise(st, "tasks spawned in order", "t%d spawned after %d tasks", t, s.Spawned)
		}
		if t <= len(s.Task) && s.Task[t-1] != Idle {
			return premise(st, "task not yet spawned", "t%d is %s", t, s.Task[t-1])
		}
	case POLL_LOCAL, GLOBAL_STEAL, WORKER_STEAL:
		return m.checkTake(s, st)
	case POLL_PENDING:
		if err := running(s, st); err != nil {
			return err
		}
		if s.Polled[t-1] {
			return premise(st, "the poll is running the future", "t%d already returned Pending in this poll", t)
		}
		if !m.open && !c.Endless && int(s.Pend[t-1]) >= c.Pendings {
			return premise(st, "the future is not finished", "t%d has returned Pending %d times and is Ready now", t, s.Pend[t-1])
		}
	case TASK_COMPLETE:
		if err := running(s, st); err != nil {
			return err
		}
		if s.Polled[t-1] {
			return premise(st, "the future returns Ready", "t%d already returned Pending in this poll", t)
		}
		if !m.open {
			if c.Endless || int(s.Pend[t-1]) < c.Pendings {
				return premise(st, "the future returns Ready", "t%d is not finished", t)
			}
			if st.Failed != (int(s.Tries[t-1]) < c.Failures && c.Policy == Retry) {
				return premise(st, "the attempt fails as programmed", "t%d attempt %d", t, s.Tries[t-1]+1)
			}
		}
	case TASK_SUSPEND:
		if err := running(s, st); err != nil {
			return err
		}
		if !s.Polled[t-1] {
			return premise(st, "the poll returns Pending", "t%d has not registered its waker in this poll", t)
		}
		if st.Repoll != m.repoll(s, st.Worker, t) {
			if st.Repoll {
				return premise(st, "woken during the poll, within its slice", "t%d is %s, slice used %d of %d", t, s.Task[t-1], s.Slice[st.Worker], c.Slice)
			}
			return premise(st, "re-queued only outside its slice", "t%d is woken and the slice has %d re-polls left", t, c.Slice-int(s.Slice[st.Worker]))
		}
	case WAKE:
		if s.Task[t-1] == Idle {
			return premise(st, "task spawned", "t%d is not spawned", t)
		}
		if !m.open && s.Wakes[t-1] == 0 {
			return premise(st, "a registered waker", "t%d has no wake to come", t)
		}
	default:
		return premise(st, "a rule", "unknown rule %d", st.Rule)
	}
	return nil
}

func running(s *State, st Step) error {
	t := st.Task
	if int(s.Cur[st.Worker]) != t {
		if s.Cur[st.Worker] == 0 {
			return premise(st, "RUNNING(w)", "w%d is idle, not polling t%d", st.Worker, t)
		}
		return premise(st, "RUNNING(w)", "w%d is polling t%d, not t%d", st.Worker, s.Cur[st.Worker], t)
	}
	return nil
}

// repoll reports whether TASK-SUSPEND of t by w re-polls it at once.
func (m *Model) repoll(s *State, w, t int) bool {
	return s.Task[t-1] == Notified && int(s.Slice[w]) < m.cfg.Slice
}

// due reports whether worker w's next take looks at the global queue first.
func (m *Model) due(s *State, w int) bool {
	gi := m.cfg.GlobalInterval
	return gi > 0 && int(s.Tick[w]) == gi-1 && len(s.Global) > 0
}

// ownerEnd returns the task at the owner end of q.
func (m *Model) ownerEnd(q []int32) int32 {
	if m.cfg.OwnerFIFO {
		return q[0]
	}
	return q[len(q)-1]
}

// pick returns the index in the global queue of the task a GLOBAL-STEAL
// takes: the head, or under the priority policy the first aged task, else
// the first task of the highest priority.
func (m *Model) pick(s *State) int {
	c := &m.cfg
	if c.Policy != Priority {
		return 0
	}
	if c.Aging > 0 {
		for i, t := range s.Global {
			if int(s.Age[t-1]) >= c.Aging {
				return i
			}
		}
	}
	best := 0
	for i, t := range s.Global {
		if m.priority(int(t)) > m.priority(int(s.Global[best])) {
			best = i
		}
	}
	return best
}

func (m *Model) priority(t int) int {
	if t-1 < len(m.cfg.Priorities) {
		return m.cfg.Priorities[t-1]
	}
	return 0
}

func (m *Model) checkTake(s *State, st Step) error {
	w, t := st.Worker, st.Task
	if s.Steal[w] != 0 {
		if st.Rule == WORKER_STEAL && !st.Read && int(s.Steal[w]) == t && st.Victim == int(s.Victim[w]) {
			return nil // StealOwnerEnd's second step: no compare-and-swap
		}
		return premise(st, "w idle", "w%d is in the middle of stealing t%d", w, s.Steal[w])
	}
	if s.Cur[w] != 0 {
		return premise(st, "w idle", "w%d is polling t%d", w, s.Cur[w])
	}
	local := s.Local[w]
	switch st.Rule {
	case POLL_LOCAL:
		if len(local) == 0 {
			return premise(st, "local(w) ≠ ∅", "w%d's local queue is empty", w)
		}
		if m.due(s, w) {
			return premise(st, "no global check due", "w%d's global-check interval came round and the global queue holds t%d", w, s.Global[0])
		}
		if end := m.ownerEnd(local); int(end) != t {
			return premise(st, "t at the owner end of local(w)", "the owner end of w%d's local queue holds t%d", w, end)
		}
	case GLOBAL_STEAL:
		if len(local) > 0 && !m.due(s, w) {
			return premise(st, "local(w) = ∅", "w%d's local queue holds %s", w, queueString(local))
		}
		if len(s.Global) == 0 {
			return premise(st, "global ≠ ∅", "the global queue is empty")
		}
		if h := s.Global[m.pick(s)]; int(h) != t {
			if m.cfg.Policy == Priority {
				return premise(st, "t is the first task by priority", "the global queue's next task by priority and age is t%d", h)
			}
			return premise(st, "t at the head of global", "the global queue's head is t%d", h)
		}
	case WORKER_STEAL:
		v := st.Victim
		if len(local) > 0 {
			return premise(st, "local(w) = ∅", "w%d's local queue holds %s", w, queueString(local))
		}
		if len(s.Global) > 0 {
			return premise(st, "global = ∅", "the global queue holds %s", queueString(s.Global))
		}
		if v < 0 || v >= m.cfg.Workers || v == w {
			return premise(st, "victim v ≠ w", "victim %d", v)
		}
		q := s.Local[v]
		if len(q) == 0 {
			return premise(st, "local(v) ≠ ∅", "w%d's local queue is empty", v)
		}
		if m.cfg.StealHalf && m.cfg.StealLast && m.cfg.Variant != StealOwnerEnd {
			// t ends a batch: it is one of the first half of the tasks.
			k := slices.Index(q, int32(t))
			if k < 0 || k >= (len(q)+1)/2 {
				return premise(st, "t among the first half of local(v)", "w%d's local queue is %s", v, queueString(q))
			}
			if mx := m.cfg.StealMax; mx > 0 && k >= mx {
				return premise(st, "a batch of at most steal-max tasks", "t%d ends a batch of %d tasks, past %d", t, k+1, mx)
			}
			break
		}
		end := q[0]
		if m.cfg.Variant == StealOwnerEnd {
			if !st.Read {
				return premise(st, "a steal begins by reading", "w%d has read no task", w)
			}
			end = q[len(q)-1]
		}
		if int(end) != t {
			return premise(st, "t at the steal end of local(v)", "the steal end of w%d's local queue holds t%d", v, end)
		}
	}
	if s.Task[t-1] != Queued && !st.Read {
		return premise(st, "t QUEUED", "t%d is %s", t, s.Task[t-1])
	}
	return nil
}

// apply performs st on s; its premise holds.
func (m *Model) apply(s *State, st Step) {
	c := &m.cfg
	t := st.Task
	i := t - 1
	switch st.Rule {
	case SPAWN:
		s.growTasks(t)
		s.Task[i] = Queued
		m.push(s, st.Dest, int32(t))
		if t > s.Spawned {
			s.Spawned = t
		}
	case POLL_LOCAL, GLOBAL_STEAL, WORKER_STEAL:
		m.take(s, st)
	case POLL_PENDING:
		if !m.open {
			if !c.Endless {
				s.Pend[i]++
			}
			s.Wakes[i] = uint8(c.Wakes)
		}
		s.Polled[i] = true
	case TASK_COMPLETE:
		w := st.Worker
		s.Cur[w] = 0
		s.Slice[w] = 0
		if st.Failed && int(s.Tries[i]) < c.Retries {
			// A fresh future: the finished one is never polled again.
			s.Tries[i]++
			s.Pend[i] = 0
			s.Task[i] = Queued
			m.push(s, Global, int32(t))
			return
		}
		s.Task[i] = Done
	case TASK_SUSPEND:
		w := st.Worker
		s.Polled[i] = false
		switch {
		case st.Repoll:
			s.Task[i] = Running
			s.Wakes[i] = 0
			s.Slice[w]++
			return
		case s.Task[i] == Notified:
			s.Task[i] = Queued
			m.push(s, w, int32(t))
		default:
			s.Task[i] = Waiting
		}
		s.Cur[w] = 0
		s.Slice[w] = 0
	case WAKE:
		if !m.open {
			s.Wakes[i]--
		}
		switch s.Task[i] {
		case Waiting:
			s.Task[i] = Queued
			m.push(s, st.Dest, int32(t))
		case Running:
			switch c.Variant {
			case LostWakeup: // the notification is dropped
			case EnqueueWhileRunning:
				m.push(s, st.Dest, int32(t))
			default:
				s.Task[i] = Notified
			}
		case Queued:
			if c.Variant == DuplicateEnqueue {
				m.push(s, st.Dest, int32(t))
			}
		}
	}
}

// WakeOutcome returns what WAKE does to t in s, as an executor reports it.
func WakeOutcome(s *State, t int) string {
	switch s.Task[t-1] {
	case Waiting:
		return "scheduled"
	case Running:
		return "notified"
	case Queued, Notified:
		return "coalesced"
	case Done:
		return "late"
	}
	return "none"
}

func (m *Model) take(s *State, st Step) {
	c := &m.cfg
	w, t := st.Worker, int32(st.Task)
	if st.Read { // StealOwnerEnd, first step: look, do not take
		s.Steal[w], s.Victim[w] = t, int8(st.Victim)
		return
	}
	switch st.Rule {
	case POLL_LOCAL:
		s.Local[w] = m.popOwner(s.Local[w])
	case GLOBAL_STEAL:
		k := m.pick(s)
		if c.Policy == Priority && c.Aging > 0 {
			for _, u := range s.Global {
				if u != t && int(s.Age[u-1]) < c.Aging {
					s.Age[u-1]++
				}
			}
			s.Age[t-1] = 0
		}
		s.Global = remove(s.Global, k)
	case WORKER_STEAL:
		v := st.Victim
		q := s.Local[v]
		switch {
		case s.Steal[w] != 0: // StealOwnerEnd, second step: remove whatever is at the end
			if len(q) > 0 {
				s.Local[v] = q[:len(q)-1]
			}
			s.Steal[w] = 0
			s.Victim[w] = 0
		case c.StealHalf && c.StealLast:
			// The batch ends at t: the tasks before it go to w's deque.
			k := slices.Index(q, t)
			s.Local[w] = append(s.Local[w], q[:k]...)
			for i := 0; i <= k; i++ {
				s.Local[v] = remove(s.Local[v], 0)
			}
		case c.StealHalf:
			n := m.batch(len(q))
			s.Local[w] = append(s.Local[w], q[1:n]...)
			s.Local[v] = remove(q, 0)
			for k := 1; k < n; k++ {
				s.Local[v] = remove(s.Local[v], 0)
			}
		default:
			s.Local[v] = remove(q, 0)
		}
	}
	s.Task[t-1] = Running
	s.Wakes[t-1] = 0 // a new poll supersedes the old registration
	s.Cur[w] = t
	s.Slice[w] = 0
	if gi := c.GlobalInterval; gi > 0 {
		s.Tick[w] = uint8((int(s.Tick[w]) + 1) % gi)
	}
}

// batch is how many tasks a steal-half takes from a queue of n: half,
// rounded up, and at most StealMax.
func (m *Model) batch(n int) int {
	h := (n + 1) / 2
	if mx := m.cfg.StealMax; mx > 0 && h > mx {
		return mx
	}
	return h
}

func (m *Model) popOwner(q []int32) []int32 {
	if m.cfg.OwnerFIFO {
		return remove(q, 0)
	}
	return q[:len(q)-1]
}

// remove deletes q[k], keeping the order. Short queues shift in place, so
// that their storage is reused; long ones (traces) are resliced at the head.
func remove(q []int32, k int) []int32 {
	if k == 0 && len(q) > 32 {
		return q[1:]
	}
	copy(q[k:], q[k+1:])
	return q[:len(q)-1]
}

// push puts t on the tail of worker dest's local queue, or of the global
// queue for dest = Global, for a policy without local queues, or when the
// local queue is full (overflow).
func (m *Model) push(s *State, dest int, t int32) {
	c := &m.cfg
	if dest >= 0 && c.LocalCap > 0 {
		if len(s.Local[dest]) < c.LocalCap {
			s.Local[dest] = append(s.Local[dest], t)
			return
		}
		if c.Variant == OverflowDrop {
			return // the bug: the task is QUEUED in no queue
		}
	}
	s.Global = append(s.Global, t)
}

// copyState copies src to dst like CopyFrom, but skips the fields this
// configuration never sets: they are zero in every state, and dst (a
// scratch state from Init, only ever overwritten by copyState) keeps them
// zero.
func (m *Model) copyState(dst, src *State) {
	c := &m.cfg
	dst.Task = append(dst.Task[:0], src.Task...)
	dst.Pend = append(dst.Pend[:0], src.Pend...)
	dst.Wakes = append(dst.Wakes[:0], src.Wakes...)
	dst.Polled = append(dst.Polled[:0], src.Polled...)
	if c.Policy == Priority {
		dst.Age = append(dst.Age[:0], src.Age...)
	}
	if c.Policy == Retry {
		dst.Tries = append(dst.Tries[:0], src.Tries...)
	}
	dst.Cur = append(dst.Cur[:0], src.Cur...)
	if c.GlobalInterval > 0 {
		dst.Tick = append(dst.Tick[:0], src.Tick...)
	}
	if c.Slice > 0 {
		dst.Slice = append(dst.Slice[:0], src.Slice...)
	}
	if c.Variant == StealOwnerEnd {
		dst.Steal = append(dst.Steal[:0], src.Steal...)
		dst.Victim = append(dst.Victim[:0], src.Victim...)
	}
	dst.Global = append(dst.Global[:0], src.Global...)
	for w := range src.Local {
		dst.Local[w] = append(dst.Local[w][:0], src.Local[w]...)
	}
	dst.Spawned = src.Spawned
}

// Next calls yield for every enabled rule instance of s, in a fixed order,
// with the successor state in next (overwritten for each instance: copy it to
// keep it). If a step reaches a state the semantics forbids outright, such
// as polling a task that is not QUEUED, yield gets a non-nil err and a nil
// next. Next stops when yield returns false. Only for closed models.
func (m *Model) Next(s, next *State, yield func(st Step, next *State, err error) bool) {
	c := &m.cfg
	try := func(st Step) bool {
		if err := m.check(s, st); err != nil {
			return yield(st, nil, fmt.Errorf("%s: %w", st, err))
		}
		m.copyState(next, s)
		m.apply(next, st)
		return yield(st, next, nil)
	}
	// SPAWN: the spawner process spawns tasks in order onto the global queue.
	if s.Spawned < c.Tasks {
		if !try(Step{Rule: SPAWN, Worker: -1, Task: s.Spawned + 1, Victim: -1, Dest: Global}) {
			return
		}
	}
	for w := 0; w < c.Workers; w++ {
		if !m.nextWorker(s, w, try) {
			return
		}
	}
	// WAKE: the event source of every task with an armed registration.
	for i := range s.Task {
		if s.Wakes[i] == 0 {
			continue
		}
		st := Step{Rule: WAKE, Worker: -1, Task: i + 1, Victim: -1, Dest: Global}
		pushes := s.Task[i] == Waiting ||
			s.Task[i] == Running && c.Variant == EnqueueWhileRunning ||
			s.Task[i] == Queued && c.Variant == DuplicateEnqueue
		if !pushes || c.LocalCap == 0 {
			if !try(st) {
				return
			}
			continue
		}
		// One instance per destination: a wake from outside goes to the
		// global queue, a wake on worker d's thread to d's local queue.
		for d := Global; d < c.Workers; d++ {
			st.Dest = d
			if !try(st) {
				return
			}
		}
	}
}

func (m *Model) nextWorker(s *State, w int, try func(Step) bool) bool {
	c := &m.cfg
	if t := s.Cur[w]; t != 0 {
		i := t - 1
		st := Step{Worker: w, Task: int(t), Victim: -1, Dest: -1}
		switch {
		case s.Polled[i]:
			st.Rule = TASK_SUSPEND
			st.Repoll = m.repoll(s, w, int(t))
		case !c.Endless && int(s.Pend[i]) >= c.Pendings:
			st.Rule = TASK_COMPLETE
			st.Failed = c.Policy == Retry && int(s.Tries[i]) < c.Failures
		default:
			st.Rule = POLL_PENDING
		}
		return try(st)
	}
	if t := s.Steal[w]; t != 0 {
		return try(Step{Rule: WORKER_STEAL, Worker: w, Task: int(t), Victim: int(s.Victim[w]), Dest: -1})
	}
	switch {
	case m.due(s, w):
		return try(Step{Rule: GLOBAL_STEAL, Worker: w, Task: int(s.Global[m.pick(s)]), Victim: -1, Dest: -1, Slot: true})
	case len(s.Local[w]) > 0:
		return try(Step{Rule: POLL_LOCAL, Worker: w, Task: int(m.ownerEnd(s.Local[w])), Victim: -1, Dest: -1})
	case len(s.Global) > 0:
		return try(Step{Rule: GLOBAL_STEAL, Worker: w, Task: int(s.Global[m.pick(s)]), Victim: -1, Dest: -1})
	}
	for v := 0; v < c.Workers; v++ {
		q := s.Local[v]
		if v == w || len(q) == 0 {
			continue
		}
		st := Step{Rule: WORKER_STEAL, Worker: w, Task: int(q[0]), Victim: v, Dest: -1}
		if c.Variant == StealOwnerEnd {
			st.Task, st.Read = int(q[len(q)-1]), true
		}
		if !try(st) {
			return false
		}
		if c.StealHalf && c.StealLast && c.Variant != StealOwnerEnd {
			// Longer batches: each ends at (and runs) its last task.
			for k := 1; k < m.batch(len(q)); k++ {
				if !try(Step{Rule: WORKER_STEAL, Worker: w, Task: int(q[k]), Victim: v, Dest: -1}) {
					return false
				}
			}
		}
	}
	return true
}
