package conform

import (
	"fmt"
	"slices"

	"github.com/execspec/execspec/checker/internal/frame"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Lock-free recording (header "order":"intervals", trace format v1.1). A
// queue operation of a lock-free executor has no instant at which the
// recorder could draw its Seq: it carries the ticks Call and Return of one
// logical clock drawn just before it starts and just after it returns, and
// took effect at some unknown tick between them. Its Seq is its Call for a
// push (spawn, wake or requeue onto a queue) and its Return for a take: a
// push is placed as early as it could have taken effect and a take as late,
// so the push of a task always comes before its take.
//
// The checker replays the events at their Seq, as under "order":"seq". When
// a take's premise fails there, it looks for an order of the overlapping
// operations that the intervals allow and the model accepts. Two operations
// overlap when neither returned before the other was called. The orders
// tried, each cheap and local to the take:
//
//   - reorder: a take of task x from the end of a FIFO queue (the global
//     queue; a victim's local queue, for a steal; the owner's local queue
//     when the owner takes FIFO) finds tasks y in front of x. Each such y
//     either was pushed by a push that overlaps x's push (y's push returned
//     after x's was called: x may have landed first, and y then stays in
//     the queue behind it), or is promised to be taken by a take that
//     overlaps this one (an obligation, below). The model then takes x from
//     the head.
//   - own local queue: a take by w from elsewhere (GLOBAL-STEAL,
//     WORKER-STEAL) finds w's own local queue non-empty: its tasks are
//     promised to be taken by takes that overlap this one (thieves that
//     emptied it before w looked). Not with lifo-slot; with steal-half
//     the tasks the steal moves go behind them (see batch steals).
//   - global queue: a take whose premise reads the global queue
//     (WORKER-STEAL's "global = ∅", POLL-LOCAL's global check) finds it
//     non-empty after the existing relaxed premise did not apply: each of
//     its tasks either was pushed by a push that had not returned when the
//     worker began to look (see the relaxed premises of Conformance), or is
//     promised to be taken by a take that overlaps this one.
//   - batch steals (steal-half from FIFO deques, the first task run): the
//     batch's size is left open (ivOpenBatch); a take of the batch's next
//     task from the thief's deque, or a take from the victim's deque of a
//     task behind the batch's first k tasks, shows that the steal moved
//     them (never more than the model's half, nor steal-max); a steal of
//     x whose queue holds tasks in front of x took x and the tasks after
//     it, the ones in front being promised to overlapping takes as in
//     reorder. A batch stolen from a thief whose own batch is still open
//     begins with that batch's tasks (each task of a batch notes which
//     deque holds it in the model). The take of a batch's task is tried
//     with the global queue hidden too, as in global queue; a take of a
//     batch's task behind its next ones from the thief's deque moves them
//     all, the ones in front then owed as in reorder (ivBatchTakeUpTo).
//     A steal from a thief's empty deque of a task still behind another
//     in victim v's is a claim as for steal-last below (ivClaim): the
//     thief's next take must be a steal from v running that other task,
//     its batch holding the claimed ones (ivClaimAfterFIFO). A task a
//     pop behind it gave to its thief's batch (ivBatchPrefix) goes back
//     to the victim for that thief's next steal from it, if called before
//     the pop returned (ivTakeBack). A steal that cut the tasks in front
//     of x (owed) opens its batch behind them, and the batch's next task
//     is at the head for ivBatchTake with owed tasks in front of it.
//   - batch steals that run their last task (steal-last, LIFO deques):
//     the bound is half of the victim's deque as the thief read it
//     (ivBatchBefore), with the global queue hidden if need be (as in
//     global queue); the tasks a batch moved meet the obligations of the
//     takes it overlaps; an earlier-placed batch steal from the same
//     deque that the steal overlaps gives back the tasks up to x (this
//     steal's CAS came first, ivGiveBack); and a steal of x from a thief
//     whose deque is empty, x still in victim v's, stands for a batch
//     steal from v the thief has in flight (its CASes done, its event not
//     yet come): the thief's next take must be that steal, called in
//     time, its batch holding the tasks (ivClaim). A steal accepted as a
//     batch of x alone, the tasks in front owed, may later be shown to
//     have held the owed tasks right in front of x, when the thief's
//     deque gives one of them up (ivForward), within half of what it read.
//   - a batch steal's own deque (both flavours) may still hold tasks that
//     thieves of it took, their events still to come: hidden for the
//     step, owed as in own local queue, kept in front of what it moved.
//
// Under steal-half the first order accepted is not final: a take much
// later may refute it where another order, or another size of a batch,
// would have conformed. A take that fails is then searched (the orders
// are numbered, and a batch's size, a claim's length and the tasks of an
// open batch owed are readings past them; conform_interval_batch_search.go):
// the trace is replayed with an earlier take read otherwise, the takes
// that moved the failed take's task and the ones overlapping it first,
// within a bound of takes, replays and kept events; the first replay that
// gets past the failure goes on. A spent bound is Unknown, never a pass.
//
// An obligation "t is taken by a take overlapping take X" is checked when
// t's next take comes (its Call must be before X's Return) or, if none
// comes, at the end of the trace; a failed obligation is a violation at
// take X, the take it was for, naming the take that should have come and
// its interval. The model's state is never cloned: the orders are tried by
// moving one task within a queue or hiding a queue for one rule
// application, so the cost stays O(1) per event on a trace whose
// operations overlap a bounded number of others; obligations are a map
// from task to the earliest deadline. On the global queue, the index of
// conform_globalq.go finds and moves the task, and finds the tasks that
// owe, in O(log n) each however many operations overlap (n pushes all
// overlapping, taken in reverse: O(n log n) in all, was O(n²)); a local
// queue is still scanned. Report.Reordered counts
// the takes accepted this way. Under "order":"seq" none of this runs.
type confIntervals struct {
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
	pos   int  // the position (confTries) of the order that accepted it
	size  int  // its batch's size as the search reads it (ivReading); -1: open
	extra int  // the tasks behind it a claim moves too, as the search reads it (ivReading)
	in    int  // the tasks the orders tried moved into the deque it takes from (ivBatchTake, ivClaim)
	owe   int  // the first tasks of the open batch of the deque it takes from, moved and owed, as the search reads it (ivReading)
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

// ivRemoved notes that the take e removed n tasks from worker v's local
// queue.
func (c *Conformance) ivRemoved(v int, e *traces.Event, n int) {
	if v < 0 || n <= 0 {
		return
	}
	for len(c.iv.pops) <= v {
		c.iv.pops = append(c.iv.pops, nil)
	}
	p := c.iv.pops[v]
	if len(p) == confMaxPops {
		p = append(p[:0], p[1:]...)
	}
	c.iv.pops[v] = append(p, confPop{seq: e.Seq, removed: n})
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

func newConfIntervals() *confIntervals {
	return &confIntervals{owed: map[int32]confOwe{}}
}

// ivPush notes the interval of a push event.
func (c *Conformance) ivPush(e *traces.Event) {
	switch e.Kind {
	case traces.KindSpawn, traces.KindWake, traces.KindRequeue:
	default:
		return
	}
	if e.Queue == traces.QueueNone || e.Task <= 0 || e.Task > MaxTask {
		return
	}
	iv := c.iv
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
		c.gq.setRet(int32(t), p.ret)
	}
}

func (c *Conformance) pushOf(t int32) confPush {
	if int(t) <= len(c.iv.push) {
		return c.iv.push[t-1]
	}
	return confPush{}
}

// ivTake checks a take's interval and settles the obligation on its task,
// before the take is applied.
func (c *Conformance) ivTake(idx int, e *traces.Event) error {
	c.iv.own, c.iv.cut, c.iv.pos = 0, 0, 0
	if e.Call == 0 || e.Return == 0 || e.Call > e.Return || e.Seq != e.Return {
		return c.fail(idx, e, frame.Rule(e), "a take carries call ≤ ret and seq = ret (order intervals)",
			fmt.Sprintf("call %d, ret %d, seq %d", e.Call, e.Return, e.Seq))
	}
	o, ok := c.iv.owed[int32(e.Task)]
	if !ok {
		return nil
	}
	if e.Call < o.deadline {
		delete(c.iv.owed, int32(e.Task))
		return nil
	}
	// Stolen from a thief that may have a batch steal in flight, which
	// took it: ivClaim settles the obligation, or it stays and fails.
	if c.ivMayClaim(e) {
		return nil
	}
	if c.ivForward(e, o) {
		return nil
	}
	delete(c.iv.owed, int32(e.Task))
	// Taken from the deque of a thief with an open batch (by the thief,
	// or stolen from it): it left the queue with the batch, whose steal
	// overlaps the take the obligation is for (or the first batch of a
	// chain, each stolen from the thief of the one before while its
	// batch was open, did: since).
	from := int(e.Worker)
	if e.Source == traces.SourceSteal {
		from = int(e.Victim)
	}
	if from >= 0 && from < len(c.iv.batch) {
		if k := slices.Index(c.iv.batch[from].tasks, int32(e.Task)); k >= 0 && c.iv.batch[from].since[k] < o.deadline {
			return nil
		}
	}
	return c.failOwed(int32(e.Task), o, fmt.Sprintf("its take at event %d (seq %d) has interval [%d, %d], called after this take returned", idx+1, e.Seq, e.Call, e.Return))
}

// failOwed records the violation of an obligation at the take it was for.
func (c *Conformance) failOwed(t int32, o confOwe, what string) error {
	premise := fmt.Sprintf("t%d is removed first by a take overlapping this one (order intervals)", t)
	reason := fmt.Sprintf("%s, so this take is accepted only if t%d was taken by a take overlapping it (called before tick %d); %s", o.why, t, o.deadline, what)
	return c.fail(o.idx, &o.ev, frame.Rule(&o.ev), premise, reason)
}

// ivFinish fails the first obligation no take settled.
func (c *Conformance) ivFinish() {
	var (
		first int32
		o     confOwe
	)
	for t, ow := range c.iv.owed {
		if first == 0 || ow.idx < o.idx || (ow.idx == o.idx && t < first) {
			first, o = t, ow
		}
	}
	if first != 0 {
		c.failOwed(first, o, "it was never taken by the end of the trace")
		return
	}
	for w := range c.iv.claim {
		if c.iv.claim[w].tasks != nil {
			c.failClaim(w, fmt.Sprintf("w%d took nothing more by the end of the trace", w))
			return
		}
	}
}

func (c *Conformance) owe(t int32, idx int, e *traces.Event, why string) {
	if o, ok := c.iv.owed[t]; ok && o.deadline <= e.Seq {
		return
	}
	c.iv.owed[t] = confOwe{deadline: e.Seq, idx: idx, ev: *e, why: why}
}

// ivRelax tries the orders of the overlapping operations (see
// confIntervals) for a take whose premise failed at its Seq with err. It
// returns nil when one is accepted (the take is applied, its obligations
// noted, and c.iv.pos says which order it was), else err. The orders are
// tried in a fixed sequence, one position each (confTries); first skips
// those before it (a reading the search over batch steals excludes,
// conform_interval_batch_search.go).
func (c *Conformance) ivRelax(idx int, e *traces.Event, st model.Step, err error, first int) error {
	s := c.s
	w, x := st.Worker, int32(st.Task)
	cfg := c.m.Config()
	accept := func(pos int) error {
		c.iv.reordered++
		c.iv.pos = pos
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
					c.iv.last[i].tasks = c.iv.last[i].tasks[k:] // i's batch began after them
					return accept(2)
				}
				c.ivUngiveBack(i, k)
			}
		}
		if first <= 3 && c.ivClaim(idx, e, st) {
			return accept(3)
		}
		if c.iv.extra > 0 {
			return err // a longer claim or nothing
		}
		if first >= confTryCut {
			if c.ivStealCut(idx, e, st, c.iv.size+1) {
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
		if c.iv.owe > 0 && !c.ivBatchOwe(from, c.iv.owe, x) {
			return err
		}
		saved := c.ivSaveBatches()
		if first <= 1 && c.ivBatchTake(from, x) {
			if c.ivStepGlobal(idx, e, st) {
				return accept(1)
			}
			// Put it back: the premise fails for another reason.
			c.ivRestoreBatches(saved)
			c.iv.moved = false
		}
		// A task behind an open batch, taken from the victim's deque.
		if first <= 2 {
			if i, k := c.ivBatchPrefix(from, x); k > 0 {
				moved := slices.Clone(s.Local[i][:k])
				if c.ivStepGlobal(idx, e, st) {
					c.iv.reordered++
					c.iv.pos = 2
					for len(c.iv.prefixed) <= i {
						c.iv.prefixed = append(c.iv.prefixed, confLast{})
					}
					c.iv.prefixed[i] = confLast{victim: from, tasks: moved, ret: e.Return}
					// The steal took them: an obligation on one is met
					// if the steal was called before its deadline.
					b := &c.iv.batch[i]
					for _, y := range moved {
						if o, ok := c.iv.owed[y]; ok && b.call < o.deadline {
							delete(c.iv.owed, y)
						}
					}
					return nil
				}
				c.ivRestoreBatches(saved)
			}
		}
		if first <= 3 && c.ivClaim(idx, e, st) {
			return accept(3)
		}
		if c.iv.extra > 0 {
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
	// With the global queue's index (conform_globalq.go) x is found and
	// moved in O(1); without it (a local queue; the tests compare the two)
	// in O(n).
	indexed := q == &s.Global && c.gq != nil
	var xTicket int
	var undo func()
	switch {
	case indexed && c.gq.has(x):
		k, xTicket = 0, c.gq.ticketOf(x)
		if c.gq.first() != x {
			k = 1 // in the queue, not its head: the index knows where
			undo = c.toFront(x)
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
		ok := c.takeStep(st, e) == nil
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
		if first <= confTryReorder+i && try(v[0], v[1]) {
			accepted, own, global = true, v[0], v[1]
			c.iv.pos = confTryReorder + i
			break
		}
	}
	if !accepted {
		unmove() // put x back where it was
		return err
	}
	c.iv.reordered++
	if k > 0 && !indexed && st.Rule == model.WORKER_STEAL && cfg.StealHalf && cfg.StealLast {
		// A batch of x alone, the k tasks in front owed: a later take of
		// one of them from w's deque may show the batch held it
		// (ivForward). The length the thief read was at most the
		// victim's now, x and the tasks taken since its call included.
		for len(c.iv.fwd) <= w {
			c.iv.fwd = append(c.iv.fwd, confFwd{})
		}
		c.iv.fwd[w] = confFwd{victim: st.Victim, idx: idx, front: k, length: len(*q) + 1 + c.ivPad(st.Victim, e.Call)}
	}
	if k > 0 && indexed {
		// The tasks that were in front of x, those whose push did not
		// overlap x's: each owes once (a take does not push, so x's
		// ticket still places them).
		c.gq.owe(xTicket, c.pushOf(x).call, func(y int32) {
			c.owe(y, idx, e, fmt.Sprintf("t%d was in front of t%d on %s", y, x, qname))
		})
	} else if k > 0 {
		// The tasks that were in front of x: now just behind the head
		// (the head, x, was taken), or back at the head (cut).
		if cut {
			*q = append(front, *q...)
			c.iv.cut = len(front)
		}
		xp := c.pushOf(x)
		for _, y := range (*q)[:k] {
			if c.pushOf(y).ret > xp.call {
				continue // its push overlaps x's: x may have landed first
			}
			c.owe(y, idx, e, fmt.Sprintf("t%d was in front of t%d on %s", y, x, qname))
		}
	}
	if own {
		for _, y := range ownSaved {
			c.owe(y, idx, e, fmt.Sprintf("w%d's own local queue held t%d", w, y))
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
func (c *Conformance) oweGlobal(idx int, e *traces.Event, w int, g []int32) {
	start := min(e.Call, c.workers[w].lastSeq)
	if c.gq != nil { // each task once, O(log n) each
		c.gq.owe(-1, start, func(y int32) {
			c.owe(y, idx, e, fmt.Sprintf("the global queue held t%d", y))
		})
		return
	}
	for _, y := range g { // without the index (the tests compare the two)
		if c.pushOf(y).ret <= start {
			c.owe(y, idx, e, fmt.Sprintf("the global queue held t%d", y))
		}
	}
}

func (c *Conformance) reordered() int {
	if c.iv == nil {
		return 0
	}
	return c.iv.reordered
}
