package picture

import (
	"slices"
	"sort"
	"strconv"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
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
	global   tlQ
	locals   []tlQ
	where    map[int64]tlWhere // the queued tasks: where each is
	cur      []int64
	task     map[int64]string // tasks not DONE
	done     tlDone           // tasks DONE: a bit each, so a trace of millions of tasks costs little
	workers  int
	changedQ map[int]bool // queues changed by the last event: -1 global, w local
	changedT []int64
	changedC []int
}

func newTLState(h traces.Header) *tlState {
	s := &tlState{workers: max(h.Workers, 0), task: map[int64]string{}, where: map[int64]tlWhere{}}
	s.local = h.Policy == "" || h.Policy == "worksteal"
	if c, ok := h.Config["local-cap"]; ok && c == 0 {
		s.local = false
	}
	s.locals = make([]tlQ, s.workers)
	s.cur = make([]int64, s.workers)
	s.changedQ = map[int]bool{}
	return s
}

func (s *tlState) worker(w int32) bool { return w >= 0 && int(w) < s.workers }

func (s *tlState) queueOf(q traces.Queue, w int32) int {
	switch {
	case q == traces.QueueGlobal:
		return -1
	case q != traces.QueueNone && q.Worker() < s.workers:
		return q.Worker()
	case q == traces.QueueNone && s.local && s.worker(w):
		return int(w)
	}
	return -1
}

func (s *tlState) push(q int, t int64) {
	at := tlPos{q: int32(q), i: int32(s.queue(q).push(t))}
	if w, ok := s.where[t]; ok {
		w.more = append(w.more, at)
		s.where[t] = w
	} else {
		s.where[t] = tlWhere{first: at}
	}
	s.changedQ[q] = true
	s.compact(q)
}

func (s *tlState) queue(q int) *tlQ {
	if q < 0 {
		return &s.global
	}
	return &s.locals[q]
}

// remove deletes t from the queue that holds it (the global queue, then
// the local queues in worker order, the earliest push in a queue), if any.
func (s *tlState) remove(t int64) {
	w, ok := s.where[t]
	if !ok {
		return
	}
	// A task is queued more than once only in a trace that says so
	// wrongly; then the first of its places in that order goes.
	k := -1
	for j, p := range w.more {
		if p.before(w.first) && (k < 0 || p.before(w.more[k])) {
			k = j
		}
	}
	at := w.first
	switch {
	case k >= 0:
		at = w.more[k]
		w.more = append(w.more[:k], w.more[k+1:]...)
		s.where[t] = w
	case len(w.more) > 0:
		w.first, w.more = w.more[0], w.more[1:]
		s.where[t] = w
	default:
		delete(s.where, t)
	}
	s.queue(int(at.q)).remove(int(at.i))
	s.changedQ[int(at.q)] = true
	s.compact(int(at.q))
}

// compact rebuilds queue q without its holes once they outnumber its
// tasks, so that memory follows the tasks queued, not those ever pushed;
// each task's place is updated (amortised O(1) per removal).
func (s *tlState) compact(q int) {
	qu := s.queue(q)
	if holes := len(qu.items) - qu.n; holes <= qu.n+64 {
		return
	}
	live := make([]int64, 0, qu.n)
	for i := qu.first(0); i < len(qu.items); i = qu.first(i + 1) {
		t := qu.items[i]
		w := s.where[t]
		w.moved(int32(q), int32(i), int32(len(live)))
		s.where[t] = w
		live = append(live, t)
	}
	*qu = tlQ{}
	for _, t := range live {
		qu.push(t)
	}
}

// tlPos is a place in a queue: the queue (-1 global, w local) and the
// index of the push in it.
type tlPos struct{ q, i int32 }

// before orders places as remove looks for a task: the global queue, then
// the local queues by worker, earlier pushes first.
func (p tlPos) before(o tlPos) bool {
	if p.q != o.q {
		return p.q < o.q
	}
	return p.i < o.i
}

// tlWhere is where a queued task is: one place, and more only in a trace
// that pushes a task that is already queued.
type tlWhere struct {
	first tlPos
	more  []tlPos
}

// moved renumbers the place (q, from) as (q, to).
func (w *tlWhere) moved(q, from, to int32) {
	if w.first == (tlPos{q, from}) {
		w.first.i = to
		return
	}
	for j := range w.more {
		if w.more[j] == (tlPos{q, from}) {
			w.more[j].i = to
			return
		}
	}
}

// tlQ is a queue of the picture: its pushes in order, a removal leaving a
// hole. next finds the first task at or after an index over the holes
// (path halving), so a take from anywhere in a long queue — a priority
// pick, an out-of-order take under order: intervals — and listing the
// queue's head cost O(log n) amortised, not a scan of the queue.
type tlQ struct {
	items []int64
	next  []int32 // next[i] == i: a task; else a later index to look at
	n     int     // the tasks queued
}

func (q *tlQ) push(t int64) int {
	i := len(q.items)
	q.items = append(q.items, t)
	q.next = append(q.next, int32(i))
	q.n++
	return i
}

func (q *tlQ) remove(i int) {
	q.next[i] = int32(i + 1)
	q.n--
}

// first returns the index of the first task at or after i, or
// len(q.items) if none.
func (q *tlQ) first(i int) int {
	for i < len(q.items) && int(q.next[i]) != i {
		j := int(q.next[i])
		if j < len(q.items) {
			q.next[i] = q.next[j]
		}
		i = int(q.next[i])
	}
	return i
}

// shown is the queue as the page shows it: its length and its first
// tasks.
func (q *tlQ) shown() tlQueue {
	h := []int64{}
	for i := q.first(0); i < len(q.items) && len(h) < tlQueueShown; i = q.first(i + 1) {
		h = append(h, q.items[i])
	}
	return tlQueue{N: q.n, H: h}
}

func (q *tlQ) clone() tlQ {
	return tlQ{items: slices.Clone(q.items), next: slices.Clone(q.next), n: q.n}
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
func (s *tlState) apply(e *traces.Event) {
	clear(s.changedQ)
	s.changedT, s.changedC = s.changedT[:0], s.changedC[:0]
	t := e.Task
	switch e.Kind {
	case traces.KindSpawn:
		s.set(t, "QUEUED")
		s.push(s.queueOf(e.Queue, e.Worker), t)
	case traces.KindTake:
		s.remove(t)
		s.set(t, "RUNNING")
		s.setCur(e.Worker, t)
	case traces.KindPollBegin:
		s.set(t, "RUNNING")
		s.setCur(e.Worker, t)
	case traces.KindPollEnd:
		if s.worker(e.Worker) && s.cur[e.Worker] == t {
			s.setCur(e.Worker, 0)
		}
		switch {
		case e.Result != traces.ResultPending:
			s.set(t, "DONE")
		case s.state(t) == "NOTIFIED":
			s.set(t, "QUEUED")
			s.push(s.queueOf(traces.QueueNone, e.Worker), t)
		default:
			s.set(t, "WAITING")
		}
	case traces.KindWake:
		out := e.Outcome
		if out == traces.OutcomeNone {
			switch s.state(t) {
			case "WAITING":
				out = traces.OutcomeScheduled
			case "RUNNING":
				out = traces.OutcomeNotified
			}
		}
		switch out {
		case traces.OutcomeScheduled:
			s.set(t, "QUEUED")
			s.push(s.queueOf(e.Queue, e.Worker), t)
		case traces.OutcomeNotified:
			s.set(t, "NOTIFIED")
		}
	case traces.KindRequeue:
		s.remove(t)
		s.set(t, "QUEUED")
		s.push(s.queueOf(e.Queue, e.Worker), t)
	case traces.KindStep:
		if e.Rule == model.WORKER_STEAL && e.Queue != traces.QueueNone {
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
func stepKind(e *traces.Event) traces.Kind {
	switch e.Rule {
	case model.SPAWN:
		return traces.KindSpawn
	case model.POLL_LOCAL, model.GLOBAL_STEAL, model.WORKER_STEAL:
		return traces.KindTake
	case model.WAKE:
		return traces.KindWake
	}
	return 0
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
			c.Q["g"] = s.global.shown()
		} else {
			c.Q[strconv.Itoa(q)] = s.locals[q].shown()
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
	sn := tlSnapshot{Global: s.global.shown(), Cur: append([]int64{}, s.cur...), Tasks: map[string]string{}, NTasks: len(s.task) + s.done.n, NDone: s.done.n}
	for i := range s.locals {
		sn.Local = append(sn.Local, s.locals[i].shown())
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
