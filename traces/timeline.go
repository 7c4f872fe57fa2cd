package traces

import (
	"sort"
	"strconv"

	"github.com/execspec/execspec/model"
)

// The timeline's picture of the state: what the trace itself says of the
// queues and the tasks after each event, rebuilt from the events alone
// (no model): where each push went (the event's queue), which task each
// take removed, each poll's outcome, each wake's outcome. The page draws
// it as bands and rows; the checker's own state at a violation is in the
// Mark's message.
//
//	spawn       task QUEUED, pushed onto e.Queue (none: the acting worker's
//	            local queue when the policy has local queues, else global)
//	take        task removed from whichever queue holds it; RUNNING on w
//	poll-begin  RUNNING on w
//	poll-end    pending: WAITING, or QUEUED again on w's queue if it was
//	            NOTIFIED; ready/panic: DONE
//	wake        scheduled: QUEUED, pushed onto e.Queue; notified: NOTIFIED;
//	            coalesced, late, dropped: no change; none: what the rules
//	            would do in the state the trace shows
//	requeue     task moved onto e.Queue; QUEUED
//	step        POLL-PENDING: registered (shown as RUNNING); a WORKER-STEAL
//	            look (with a queue): no change; other rules as their events

// tlQueueShown bounds the tasks of one queue written into the page per
// change; the count is always exact.
const tlQueueShown = 12

// tlQueue is a queue's content as the page shows it: its length and its
// first tasks, head first.
type tlQueue struct {
	N int     `json:"n"`
	H []int64 `json:"h"`
}

// tlState is the state the timeline rebuilds from the events.
type tlState struct {
	local    bool // the policy has local queues
	global   []int64
	locals   [][]int64
	cur      []int64
	task     map[int64]string // tasks not DONE
	done     tlDone           // tasks DONE: a bit each, so a trace of millions of tasks costs little
	workers  int
	changedQ map[int]bool // queues changed by the last event: -1 global, w local
	changedT []int64
	changedC []int
}

func newTLState(h Header) *tlState {
	s := &tlState{workers: max(h.Workers, 0), task: map[int64]string{}}
	s.local = h.Policy == "" || h.Policy == "worksteal"
	if c, ok := h.Config["local-cap"]; ok && c == 0 {
		s.local = false
	}
	s.locals = make([][]int64, s.workers)
	s.cur = make([]int64, s.workers)
	s.changedQ = map[int]bool{}
	return s
}

func (s *tlState) worker(w int32) bool { return w >= 0 && int(w) < s.workers }

func (s *tlState) queueOf(q Queue, w int32) int {
	switch {
	case q == QueueGlobal:
		return -1
	case q != QueueNone && q.Worker() < s.workers:
		return q.Worker()
	case q == QueueNone && s.local && s.worker(w):
		return int(w)
	}
	return -1
}

func (s *tlState) push(q int, t int64) {
	if q < 0 {
		s.global = append(s.global, t)
	} else {
		s.locals[q] = append(s.locals[q], t)
	}
	s.changedQ[q] = true
}

// remove deletes t from the queue that holds it (the global queue, then
// the local queues), if any.
func (s *tlState) remove(t int64) {
	if i := indexOf(s.global, t); i >= 0 {
		s.global = cut(s.global, i)
		s.changedQ[-1] = true
		return
	}
	for w, q := range s.locals {
		if i := indexOf(q, t); i >= 0 {
			s.locals[w] = cut(q, i)
			s.changedQ[w] = true
			return
		}
	}
}

func indexOf(q []int64, t int64) int {
	for i, u := range q {
		if u == t {
			return i
		}
	}
	return -1
}

// cut removes q[i]; a removal at the head reslices, so a long FIFO queue
// costs O(1) per take.
func cut(q []int64, i int) []int64 {
	if i == 0 {
		return q[1:]
	}
	return append(q[:i], q[i+1:]...)
}

// state returns task t's state: "" for a task the trace has not named.
func (s *tlState) state(t int64) string {
	if st, ok := s.task[t]; ok {
		return st
	}
	if s.done.has(t) {
		return "DONE"
	}
	return ""
}

func (s *tlState) set(t int64, st string) {
	if t == 0 || s.state(t) == st {
		return
	}
	if st == "DONE" {
		delete(s.task, t)
		s.done.set(t, true)
	} else {
		s.done.set(t, false)
		s.task[t] = st
	}
	s.changedT = append(s.changedT, t)
}

// tlDone is a set of task ids: a bitmap for ids below tlDoneBits, a map
// above.
type tlDone struct {
	bits []uint64
	big  map[int64]bool
	n    int
}

const tlDoneBits = 1 << 26

func (d *tlDone) has(t int64) bool {
	if t > 0 && t < tlDoneBits {
		i := int(t >> 6)
		return i < len(d.bits) && d.bits[i]&(1<<(t&63)) != 0
	}
	return d.big[t]
}

func (d *tlDone) set(t int64, on bool) {
	if d.has(t) == on {
		return
	}
	if on {
		d.n++
	} else {
		d.n--
	}
	if t > 0 && t < tlDoneBits {
		i := int(t >> 6)
		if on && i >= len(d.bits) {
			d.bits = append(d.bits, make([]uint64, i+1-len(d.bits))...)
		}
		d.bits[i] ^= 1 << (t & 63)
		return
	}
	if d.big == nil {
		d.big = map[int64]bool{}
	}
	if on {
		d.big[t] = true
	} else {
		delete(d.big, t)
	}
}

func (s *tlState) setCur(w int32, t int64) {
	if s.worker(w) && s.cur[w] != t {
		s.cur[w] = t
		s.changedC = append(s.changedC, int(w))
	}
}

// apply applies e; the changed* fields then say what it changed.
func (s *tlState) apply(e *Event) {
	clear(s.changedQ)
	s.changedT, s.changedC = s.changedT[:0], s.changedC[:0]
	t := e.Task
	switch e.Kind {
	case KindSpawn:
		s.set(t, "QUEUED")
		s.push(s.queueOf(e.Queue, e.Worker), t)
	case KindTake:
		s.remove(t)
		s.set(t, "RUNNING")
		s.setCur(e.Worker, t)
	case KindPollBegin:
		s.set(t, "RUNNING")
		s.setCur(e.Worker, t)
	case KindPollEnd:
		if s.worker(e.Worker) && s.cur[e.Worker] == t {
			s.setCur(e.Worker, 0)
		}
		switch {
		case e.Result != ResultPending:
			s.set(t, "DONE")
		case s.state(t) == "NOTIFIED":
			s.set(t, "QUEUED")
			s.push(s.queueOf(QueueNone, e.Worker), t)
		default:
			s.set(t, "WAITING")
		}
	case KindWake:
		out := e.Outcome
		if out == OutcomeNone {
			switch s.state(t) {
			case "WAITING":
				out = OutcomeScheduled
			case "RUNNING":
				out = OutcomeNotified
			}
		}
		switch out {
		case OutcomeScheduled:
			s.set(t, "QUEUED")
			s.push(s.queueOf(e.Queue, e.Worker), t)
		case OutcomeNotified:
			s.set(t, "NOTIFIED")
		}
	case KindRequeue:
		s.remove(t)
		s.set(t, "QUEUED")
		s.push(s.queueOf(e.Queue, e.Worker), t)
	case KindStep:
		if e.Rule == model.WORKER_STEAL && e.Queue != QueueNone {
			break // a look at a queue, not a take
		}
		if k := stepKind(e); k != 0 {
			x := *e
			x.Kind = k
			s.apply(&x)
		}
	}
}

// stepKind maps a model step onto the event kind that reports it.
func stepKind(e *Event) Kind {
	switch e.Rule {
	case model.SPAWN:
		return KindSpawn
	case model.POLL_LOCAL, model.GLOBAL_STEAL, model.WORKER_STEAL:
		return KindTake
	case model.WAKE:
		return KindWake
	}
	return 0
}

func shownQueue(q []int64) tlQueue {
	return tlQueue{N: len(q), H: append([]int64{}, q[:min(len(q), tlQueueShown)]...)}
}

// tlChange is what one event changed, as the page applies it.
type tlChange struct {
	Q map[string]tlQueue `json:"q,omitempty"` // "g" or the worker
	C map[string]int64   `json:"c,omitempty"` // worker → task it polls (0: idle)
	T map[string]string  `json:"t,omitempty"` // task → state
}

func (s *tlState) change() *tlChange {
	if len(s.changedQ) == 0 && len(s.changedT) == 0 && len(s.changedC) == 0 {
		return nil
	}
	c := &tlChange{}
	for q := range s.changedQ {
		if c.Q == nil {
			c.Q = map[string]tlQueue{}
		}
		if q < 0 {
			c.Q["g"] = shownQueue(s.global)
		} else {
			c.Q[strconv.Itoa(q)] = shownQueue(s.locals[q])
		}
	}
	for _, w := range s.changedC {
		if c.C == nil {
			c.C = map[string]int64{}
		}
		c.C[strconv.Itoa(w)] = s.cur[w]
	}
	for _, t := range s.changedT {
		if c.T == nil {
			c.T = map[string]string{}
		}
		c.T[strconv.FormatInt(t, 10)] = s.state(t)
	}
	return c
}

// tlShownTasks bounds the tasks listed in the state at a window's start.
const tlShownTasks = 200

// tlSnapshot is the state at the start of a window.
type tlSnapshot struct {
	Global tlQueue           `json:"global"`
	Local  []tlQueue         `json:"local"`
	Cur    []int64           `json:"cur"`
	Tasks  map[string]string `json:"tasks"` // the tasks not DONE, at most tlShownTasks
	NTasks int               `json:"ntasks"`
	NDone  int               `json:"ndone"`
}

func (s *tlState) snapshot() tlSnapshot {
	sn := tlSnapshot{Global: shownQueue(s.global), Cur: append([]int64{}, s.cur...), Tasks: map[string]string{}, NTasks: len(s.task) + s.done.n, NDone: s.done.n}
	for _, q := range s.locals {
		sn.Local = append(sn.Local, shownQueue(q))
	}
	ids := make([]int64, 0, len(s.task))
	for t := range s.task {
		ids = append(ids, t)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, t := range ids[:min(len(ids), tlShownTasks)] {
		sn.Tasks[strconv.FormatInt(t, 10)] = s.task[t]
	}
	return sn
}
