package interval

import (
	"fmt"
	"slices"

	"github.com/execspec/execspec/checker/conform/internal/globalq"
	"github.com/execspec/execspec/checker/internal/frame"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Reader reads the takes of one trace under "order":"intervals" for the
// conformance checker it was made for (its Host): Push notes each push's
// interval, Take settles the obligations on a take's task before it is
// applied, Relax tries the orders the intervals allow when the take's
// premise failed at its Seq, Reading and LastReading set up the readings
// the search over batch steals tries, and Finish fails the first
// obligation no take settled. It changes the model state it was given, as
// the checker does; it is not safe for concurrent use.
type Reader struct {
	h        Host
	s        *model.State // the model state, the checker's
	m        *model.Model
	gq       *globalq.Index // the global queue's index, or nil
	priority bool           // the priority policy: takes from anywhere in the global queue
	slotOn   bool           // lifo-slot=1

	push      []confPush        // by task id - 1: the interval of the task's last push
	owed      map[int32]confOwe // obligations by task
	reordered int
	// pops: by worker, the last takes that removed tasks from its local
	// queue (Seq, tasks removed; oldest first), its own and thieves', for a
	// batch steal that overlaps them (steal-last).
	pops [][]confPop
	// batch: by thief, the tasks a steal-half (its first task run) may
	// have moved into the thief's deque, left at the victim's head until a
	// take shows where they went (see ivOpenBatch).
	batch []confBatch
	moved bool // the take being checked took a task of an open batch
	pos   int  // the position (Tries) of the order that accepted it
	size  int  // its batch's size as the search reads it (Reading); -1: open
	extra int  // the tasks behind it a claim moves too, as the search reads it (Reading)
	in    int  // the tasks the orders tried moved into the deque it takes from (ivBatchTake, ivClaim)
	owe   int  // the first tasks of the open batch of the deque it takes from, moved and owed, as the search reads it (Reading)
	// unowed: the obligations the orders tried for it met, for
	// ivRestoreBatches to put back when an order is refused.
	unowed []confUnowe
	own    int // its thief's own tasks kept in front of what it moved (ivOwnBack)
	cut    int // the tasks in front of the task it stole, owed, kept at the victim's head
	// last: by thief, the tasks its last batch steal (steal-last) moved
	// into its deque, for a steal from the same deque that overlaps it
	// and took the first of them (ivGiveBack).
	last []confLast
	// claim: by thief, the batch steal (steal-last) it has in flight,
	// known only from a take of one of its tasks from its deque before
	// the steal's own event came (ivClaim); its next take must be that
	// steal.
	claim []confClaim
	fwd   []confFwd // by thief: its last batch steal of one task with tasks owed in front
	// prefixed: by thief, the tasks a take from its victim's deque behind
	// them last showed its open batch held (ivBatchPrefix; ret: that
	// take's Return), for ivTakeBack.
	prefixed []confLast
}

type confPop struct {
	seq     uint64
	removed int
}

// confMaxPops is how many takes from one local queue are kept (pops):
// more than a batch steal's interval overlaps in the traces seen.
const confMaxPops = 16

// Removed notes that the take e removed n tasks from worker v's local
// queue.
func (c *Reader) Removed(v int, e *traces.Event, n int) {
	if v < 0 || n <= 0 {
		return
	}
	for len(c.pops) <= v {
		c.pops = append(c.pops, nil)
	}
	p := c.pops[v]
	if len(p) == confMaxPops {
		p = append(p[:0], p[1:]...)
	}
	c.pops[v] = append(p, confPop{seq: e.Seq, removed: n})
}

type confPush struct{ call, ret uint64 }

// confOwe is an obligation: task must be taken by a take called before
// deadline, the Return of take ev (event idx of the trace).
type confOwe struct {
	deadline uint64
	idx      int
	ev       traces.Event
	why      string // why the take needed it gone
}

// New returns the reader of the takes of one trace under "order":"intervals"
// for the checker h, whose model m and state s it reads and changes (and
// the global queue's index gq, nil if none); priority and slotOn say
// whether the checker takes from anywhere in the global queue (priority)
// and keeps a LIFO slot per worker.
func New(h Host, s *model.State, m *model.Model, gq *globalq.Index, priority, slotOn bool) *Reader {
	return &Reader{h: h, s: s, m: m, gq: gq, priority: priority, slotOn: slotOn, owed: map[int32]confOwe{}}
}

// Host is what a Reader needs of the checker it reads for.
type Host interface {
	// TakeStep applies take st (of event e) to the model state as the
	// checker applies a take at its Seq; an error when a premise fails.
	// The event goes by value: a pointer given to an interface's method
	// escapes, and the checker's event would then be allocated for every
	// event of every trace.
	TakeStep(st model.Step, e traces.Event) error
	// Fail records the violation at event idx, e, of rule r: the premise
	// that failed and what held instead.
	Fail(idx int, e traces.Event, r model.Rule, premise, reason string) error
	// LastSeq is the Seq of worker w's last event.
	LastSeq(w int) uint64
	// Moved notes that the batch steal of the event being checked moved
	// the tasks ts (the search over readings follows them).
	Moved(ts []int32)
}

// SetHost makes h the checker the reader reads for (a checker that takes
// over the state of another, with its reader).
func (c *Reader) SetHost(h Host) { c.h = h }

// WithoutIndex makes the reader find and move tasks in the global queue by
// scanning it, as it did before the index (the tests compare the two).
func (c *Reader) WithoutIndex() { c.gq = nil }

// Pos is the position (Tries) of the order that accepted the last take.
func (c *Reader) Pos() int { return c.pos }

// In is how many tasks the orders tried for the last take moved into the
// deque it took from.
func (c *Reader) In() int { return c.in }

// Push notes the interval of a push event.
func (c *Reader) Push(e *traces.Event) {
	switch e.Kind {
	case traces.KindSpawn, traces.KindWake, traces.KindRequeue:
	default:
		return
	}
	if e.Queue == traces.QueueNone || e.Task <= 0 || e.Task > frame.MaxTask {
		return
	}
	iv := c
	t := int(e.Task)
	for len(iv.push) < t {
		iv.push = append(iv.push, confPush{})
	}
	p := confPush{call: e.Call, ret: e.Return}
	if p.call == 0 || p.ret < p.call {
		p = confPush{call: e.Seq, ret: e.Seq} // no interval: a point
	}
	iv.push[t-1] = p
	if c.gq != nil {
		c.gq.SetRet(int32(t), p.ret)
	}
}

func (c *Reader) pushOf(t int32) confPush {
	if int(t) <= len(c.push) {
		return c.push[t-1]
	}
	return confPush{}
}

// Take checks a take's interval and settles the obligation on its task,
// before the take is applied.
func (c *Reader) Take(idx int, e *traces.Event) error {
	c.own, c.cut, c.pos = 0, 0, 0
	if e.Call == 0 || e.Return == 0 || e.Call > e.Return || e.Seq != e.Return {
		return c.h.Fail(idx, *e, frame.Rule(e), "a take carries call ≤ ret and seq = ret (order intervals)",
			fmt.Sprintf("call %d, ret %d, seq %d", e.Call, e.Return, e.Seq))
	}
	o, ok := c.owed[int32(e.Task)]
	if !ok {
		return nil
	}
	if e.Call < o.deadline {
		delete(c.owed, int32(e.Task))
		return nil
	}
	// Stolen from a thief that may have a batch steal in flight, which
	// took it: ivClaim settles the obligation, or it stays and fails.
	if c.ivMayClaim(e, false) || c.ivMayClaim(e, true) {
		return nil
	}
	if c.ivForward(e, o) {
		return nil
	}
	delete(c.owed, int32(e.Task))
	// Taken from the deque of a thief with an open batch (by the thief,
	// or stolen from it): it left the queue with the batch, whose steal
	// overlaps the take the obligation is for (or the first batch of a
	// chain, each stolen from the thief of the one before while its
	// batch was open, did: since).
	from := int(e.Worker)
	if e.Source == traces.SourceSteal {
		from = int(e.Victim)
	}
	if from >= 0 && from < len(c.batch) {
		if k := slices.Index(c.batch[from].tasks, int32(e.Task)); k >= 0 && c.batch[from].since[k] < o.deadline {
			return nil
		}
	}
	return c.failOwed(int32(e.Task), o, fmt.Sprintf("its take at event %d (seq %d) has interval [%d, %d], called after this take returned", idx+1, e.Seq, e.Call, e.Return))
}

// failOwed records the violation of an obligation at the take it was for.
func (c *Reader) failOwed(t int32, o confOwe, what string) error {
	premise := fmt.Sprintf("t%d is removed first by a take overlapping this one (order intervals)", t)
	reason := fmt.Sprintf("%s, so this take is accepted only if t%d was taken by a take overlapping it (called before tick %d); %s", o.why, t, o.deadline, what)
	return c.h.Fail(o.idx, o.ev, frame.Rule(&o.ev), premise, reason)
}

// Finish fails the first obligation no take settled.
func (c *Reader) Finish() {
	var (
		first int32
		o     confOwe
	)
	for t, ow := range c.owed {
		if first == 0 || ow.idx < o.idx || (ow.idx == o.idx && t < first) {
			first, o = t, ow
		}
	}
	if first != 0 {
		c.failOwed(first, o, "it was never taken by the end of the trace")
		return
	}
	for w := range c.claim {
		if c.claim[w].tasks != nil {
			c.failClaim(w, fmt.Sprintf("w%d took nothing more by the end of the trace", w))
			return
		}
	}
}

func (c *Reader) oweTask(t int32, idx int, e *traces.Event, why string) {
	if o, ok := c.owed[t]; ok && o.deadline <= e.Seq {
		return
	}
	c.owed[t] = confOwe{deadline: e.Seq, idx: idx, ev: *e, why: why}
}

// Relax tries the orders of the overlapping operations (see the
// package doc) for a take whose premise failed at its Seq with err. It
// returns nil when one is accepted (the take is applied, its obligations
// noted, and c.pos says which order it was), else err. The orders are
// tried in a fixed sequence, one position each (Tries); first skips
// those before it (a reading the search over batch steals excludes,
// the search in package conform).
func (c *Reader) Relax(idx int, e *traces.Event, st model.Step, err error, first int) error {
	s := c.s
	w, x := st.Worker, int32(st.Task)
	cfg := c.m.Config()
	accept := func(pos int) error {
		c.reordered++
		c.pos = pos
		return nil
	}
	if st.Rule == model.WORKER_STEAL && cfg.StealHalf && cfg.StealLast {
		if first <= 1 && c.ivStealLast(idx, e, st) {
			return accept(1)
		}
		// An earlier-placed batch steal from the same deque that this
		// one overlaps moved x: this steal took x first, and that batch
		// began after it.
		if first <= 2 {
			if i, k := c.ivGiveBack(st.Victim, x, e); k > 0 {
				if c.ivStealLast(idx, e, st) {
					c.last[i].tasks = c.last[i].tasks[k:] // i's batch began after them
					return accept(2)
				}
				c.ivUngiveBack(i, k)
			}
		}
		if first <= 3 && c.ivClaim(idx, e, st, false) {
			return accept(3)
		}
		if first <= 4 && c.ivClaim(idx, e, st, true) {
			return accept(4)
		}
		if c.extra > 0 {
			return err // a longer claim or nothing
		}
		if first >= TryCut {
			if c.ivStealCut(idx, e, st, c.size+1) {
				return accept(first)
			}
			return err
		}
	}
	if cfg.StealHalf && !cfg.StealLast && cfg.OwnerFIFO {
		// A task of an open batch, taken from the thief's deque.
		from := -1
		switch {
		case st.Rule == model.POLL_LOCAL:
			from = w
		case st.Rule == model.WORKER_STEAL:
			from = st.Victim
		}
		if c.owe > 0 && !c.ivBatchOwe(from, c.owe, x) {
			return err
		}
		saved := c.ivSaveBatches()
		if first <= 1 && c.ivBatchTake(from, x) {
			if c.ivStepGlobal(idx, e, st) {
				return accept(1)
			}
			// Put it back: the premise fails for another reason.
			c.ivRestoreBatches(saved)
			c.moved = false
		}
		// A task behind an open batch, taken from the victim's deque.
		if first <= 2 {
			if i, k := c.ivBatchPrefix(from, x); k > 0 {
				moved := slices.Clone(s.Local[i][:k])
				if c.ivStepGlobal(idx, e, st) {
					c.reordered++
					c.pos = 2
					for len(c.prefixed) <= i {
						c.prefixed = append(c.prefixed, confLast{})
					}
					c.prefixed[i] = confLast{victim: from, tasks: moved, ret: e.Return}
					// The steal took them: an obligation on one is met
					// if the steal was called before its deadline.
					b := &c.batch[i]
					for _, y := range moved {
						if o, ok := c.owed[y]; ok && b.call < o.deadline {
							delete(c.owed, y)
						}
					}
					return nil
				}
				c.ivRestoreBatches(saved)
			}
		}
		if first <= 3 && c.ivClaim(idx, e, st, false) {
			return accept(3)
		}
		if c.extra > 0 {
			return err // a longer claim or nothing
		}
		if first <= 4 && c.ivTakeBack(idx, e, st) {
			return accept(4)
		}
		// A task of an open batch behind its next ones, taken from the
		// thief's deque: the batch held them all; the ones in front of x
		// are then in front of it there, and owe as in reorder below.
		c.ivBatchTakeUpTo(from, x)
	}

	// The queue the take reads from its FIFO end, if any.
	var q *[]int32
	var qname string
	switch {
	case st.Rule == model.GLOBAL_STEAL && !c.priority:
		q, qname = &s.Global, "the global queue"
	case st.Rule == model.WORKER_STEAL && !c.slotOn && st.Victim >= 0 && st.Victim < len(s.Local) && st.Victim != w:
		q, qname = &s.Local[st.Victim], fmt.Sprintf("w%d's local queue", st.Victim)
	case st.Rule == model.POLL_LOCAL && cfg.OwnerFIFO && !c.slotOn && e.Source == traces.SourceLocal && w < len(s.Local):
		q, qname = &s.Local[w], fmt.Sprintf("w%d's local queue", w)
	}
	k := -1
	// With the global queue's index (package globalq) x is found and
	// moved in O(1); without it (a local queue; the tests compare the two)
	// in O(n).
	indexed := q == &s.Global && c.gq != nil
	var xTicket int
	var undo func()
	switch {
	case indexed && c.gq.Has(x):
		k, xTicket = 0, c.gq.TicketOf(x)
		if c.gq.First() != x {
			k = 1 // in the queue, not its head: the index knows where
			undo = c.gq.ToFront(&s.Global, x)
		}
	case q != nil && !indexed:
		k = slices.Index(*q, x)
	}
	// A steal of half a queue from its head (not steal-last) took x and
	// the tasks after it in one piece: the tasks in front of x were gone
	// (taken by overlapping takes) and are no part of the batch. They
	// are cut off for the step and put back at the head after it.
	var front []int32
	cut := k > 0 && !indexed && st.Rule == model.WORKER_STEAL && cfg.StealHalf && !cfg.StealLast
	switch {
	case cut:
		front = slices.Clone((*q)[:k])
		*q = (*q)[k:]
	case k > 0 && !indexed:
		// Move x to the head.
		qq := *q
		copy(qq[1:k+1], qq[:k])
		qq[0] = x
	}
	unmove := func() {
		switch {
		case k > 0 && indexed:
			undo()
		case cut:
			*q = append(front, *q...)
		case k > 0:
			qq := *q
			copy(qq[:k], qq[1:k+1])
			qq[k] = x
		}
	}
	hideOwn := (st.Rule == model.GLOBAL_STEAL || st.Rule == model.WORKER_STEAL) &&
		!c.slotOn && w >= 0 && w < len(s.Local) && len(s.Local[w]) > 0
	hideGlobal := (st.Rule == model.WORKER_STEAL || st.Rule == model.POLL_LOCAL) && len(s.Global) > 0
	var ownSaved, globalSaved []int32 // hidden from the take
	try := func(own, global bool) bool {
		if !own && !global && k <= 0 {
			return false // nothing changed: the premise failed as it was
		}
		if (own && !hideOwn) || (global && !hideGlobal) {
			return false
		}
		ownSaved, globalSaved = nil, nil
		if own {
			ownSaved, s.Local[w] = s.Local[w], nil
		}
		if global {
			globalSaved, s.Global = s.Global, nil
		}
		ok := c.h.TakeStep(st, *e) == nil
		if own {
			c.ivOwnBack(w, ownSaved, ok)
		}
		if global {
			// The take read the global queue but did not take from it.
			s.Global = globalSaved
		}
		return ok
	}
	accepted := false
	var own, global bool
	for i, v := range [...][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		if first <= TryReorder+i && try(v[0], v[1]) {
			accepted, own, global = true, v[0], v[1]
			c.pos = TryReorder + i
			break
		}
	}
	if !accepted {
		unmove() // put x back where it was
		return err
	}
	c.reordered++
	if k > 0 && !indexed && st.Rule == model.WORKER_STEAL && cfg.StealHalf && cfg.StealLast {
		// A batch of x alone, the k tasks in front owed: a later take of
		// one of them from w's deque may show the batch held it
		// (ivForward). The length the thief read was at most the
		// victim's now, x and the tasks taken since its call included.
		for len(c.fwd) <= w {
			c.fwd = append(c.fwd, confFwd{})
		}
		c.fwd[w] = confFwd{victim: st.Victim, idx: idx, front: k, length: len(*q) + 1 + c.ivPad(st.Victim, e.Call)}
	}
	if k > 0 && indexed {
		// The tasks that were in front of x, those whose push did not
		// overlap x's: each owes once (a take does not push, so x's
		// ticket still places them).
		c.gq.Owe(xTicket, c.pushOf(x).call, func(y int32) {
			c.oweTask(y, idx, e, fmt.Sprintf("t%d was in front of t%d on %s", y, x, qname))
		})
	} else if k > 0 {
		// The tasks that were in front of x: now just behind the head
		// (the head, x, was taken), or back at the head (cut).
		if cut {
			*q = append(front, *q...)
			c.cut = len(front)
		}
		xp := c.pushOf(x)
		for _, y := range (*q)[:k] {
			if c.pushOf(y).ret > xp.call {
				continue // its push overlaps x's: x may have landed first
			}
			c.oweTask(y, idx, e, fmt.Sprintf("t%d was in front of t%d on %s", y, x, qname))
		}
	}
	if own {
		for _, y := range ownSaved {
			c.oweTask(y, idx, e, fmt.Sprintf("w%d's own local queue held t%d", w, y))
		}
	}
	if global {
		c.oweGlobal(idx, e, w, globalSaved)
	}
	return nil
}

// oweGlobal notes the obligations of take e by w (event idx), accepted
// with the global queue g hidden: each task of g whose push had returned
// when w began to look (the others may have landed after the look) owes.
func (c *Reader) oweGlobal(idx int, e *traces.Event, w int, g []int32) {
	start := min(e.Call, c.h.LastSeq(w))
	if c.gq != nil { // each task once, O(log n) each
		c.gq.Owe(-1, start, func(y int32) {
			c.oweTask(y, idx, e, fmt.Sprintf("the global queue held t%d", y))
		})
		return
	}
	for _, y := range g { // without the index (the tests compare the two)
		if c.pushOf(y).ret <= start {
			c.oweTask(y, idx, e, fmt.Sprintf("the global queue held t%d", y))
		}
	}
}

// Reordered is how many takes were accepted in an order of the
// overlapping operations other than their Seq.
func (c *Reader) Reordered() int { return c.reordered }

// PushRet is the return tick of task t's last push (0 if none).
func (c *Reader) PushRet(t int32) uint64 { return c.pushOf(t).ret }
