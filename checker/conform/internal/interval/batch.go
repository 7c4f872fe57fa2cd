package interval

import (
	"fmt"
	"slices"

	"github.com/execspec/execspec/checker/internal/frame"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Batch steals under "order":"intervals" (steal-half; see the package doc): the open FIFO batch and the thief's deque, the
// LIFO batch as the thief read it, given back or shown later, and the
// claims of batch steals in flight.

// confFwd is a batch steal (steal-last) accepted as a batch of its task
// alone, the tasks in front of it owed (event idx): front of them, from a
// deque of at most length tasks as the thief read it.
type confFwd struct {
	victim int
	idx    int
	front  int
	length int
	moved  int // tasks ivForward has moved into the batch since
}

type confClaim struct {
	victim   int
	tasks    []int32 // the tasks the steal moved, in order
	deadline uint64  // the steal's Call comes before it
	run      int32   // from a FIFO deque, the task the steal runs (else -1)
	kept     []int32 // FIFO: the claimed tasks still in the thief's deque at its steal (ClaimBefore)
	idx      int     // the take that made the claim (event idx, ev)
	ev       traces.Event
}

type confLast struct {
	victim int
	tasks  []int32
	ret    uint64 // the steal's Return
}

type confBatch struct {
	victim int
	tasks  []int32
	// at: by task of tasks, the worker whose deque holds it in the model
	// (at its head): the victim's, or, for a batch stolen from a thief
	// whose own batch was still open, the deque that batch was stolen
	// from (ivOpenBatch).
	at []int
	// since: by task of tasks, the Call of the first batch steal of the
	// chain that moved it (this one's, or, for the tasks of a thief's
	// open batch it begins with, that batch's since): it left the first
	// deque then.
	since []uint64
	call  uint64 // the steal's Call
	ret   uint64 // and its Return
	// lead: the tasks that lead the batch in the thief's deque, in front
	// of what it moved: the own tasks kept there at the steal (ivOwnBack),
	// then the tasks of the batch shown moved (ivBatchPrefix,
	// ivBatchTake). A task shown moved goes behind those still there
	// (ivBatchFront).
	lead []int32
}

// drop removes the first k tasks of the batch.
func (b *confBatch) drop(k int) {
	b.tasks, b.at, b.since = b.tasks[k:], b.at[k:], b.since[k:]
}

// ivSaveBatches returns the local queues and the open batches, for
// ivRestoreBatches to put back when a tried order is refused. It copies
// only the slice headers (O(workers)): the orders tried never write into
// a queue's or a batch's array, they reslice it or make a new one.
func (c *Reader) ivSaveBatches() confSaved {
	return confSaved{local: slices.Clone(c.s.Local), batch: slices.Clone(c.batch), in: c.in, unowed: len(c.unowed)}
}

func (c *Reader) ivRestoreBatches(sv confSaved) {
	copy(c.s.Local, sv.local)
	c.batch = sv.batch
	c.in = sv.in
	for _, u := range c.unowed[sv.unowed:] {
		c.owed[u.task] = u.o
	}
	c.unowed = c.unowed[:sv.unowed]
}

type confSaved struct {
	local  [][]int32
	batch  []confBatch
	in     int
	unowed int
}

// confUnowe is an obligation an order tried met (ivBatchTake).
type confUnowe struct {
	task int32
	o    confOwe
}

// ivOpenBatch leaves the size of a steal-half by w from v (which runs the
// batch's first task; FIFO deques, owner-lifo 0) open: a lock-free deque takes the batch with one CAS,
// its size from a length read before it, so the half the model computes at
// the steal's Seq may be more than was taken. The tasks the model moved
// into w's deque go back to the head of v's, in order, and are noted; a
// later take shows where each went (ivBatchTake).
//
// The half is of the length the thief read when it began: takes from v's
// deque placed before the steal but returned within its interval had not
// shortened it yet, so the batch may run that much longer than the model's
// half at the steal's Seq; those tasks are candidates too.
func (c *Reader) ivOpenBatch(w, v int, call, ret uint64, chained bool) {
	s := c.s
	if w < 0 || w >= len(s.Local) || v < 0 || v >= len(s.Local) {
		return
	}
	// The tasks moved go back to v's deque, behind the tasks in front of
	// the stolen one if the steal cut them (owed to overlapping takes:
	// gone before the batch, never part of it).
	moved := slices.Clone(s.Local[w][c.own:]) // behind the own tasks kept (ivOwnBack)
	cut := min(c.cut, len(s.Local[v]))
	s.Local[v] = slices.Concat(s.Local[v][:cut], moved, s.Local[v][cut:])
	s.Local[w] = s.Local[w][:c.own]
	pad := 0
	if v < len(c.pops) {
		for _, p := range c.pops[v] {
			if p.seq > call && p.seq < ret {
				pad += p.removed
			}
		}
	}
	// The steal took the first task of v's own open batch (chained): v's
	// deque began with that batch's other tasks, still at the head of
	// the deque it was stolen from in the model, then v's own.
	var tasks []int32
	var at []int
	var since []uint64
	if chained && v < len(c.batch) {
		b := &c.batch[v]
		tasks, at, since = slices.Clone(b.tasks), slices.Clone(b.at), slices.Clone(b.since)
	}
	tasks = append(tasks, s.Local[v][cut:]...)
	for len(at) < len(tasks) {
		at = append(at, v)
		since = append(since, call)
	}
	// The batch runs one task and moves the rest of half the length read
	// (at most steal-max tasks in all).
	most := min((len(tasks)+1+pad+1)/2-1, len(tasks))
	if mx := c.m.Config().StealMax; mx > 0 {
		most = min(most, mx-1)
	}
	if most < len(moved) {
		most = len(moved) // the model's half at the steal's Seq
	}
	if c.size >= 0 {
		most = min(most, c.size) // the search reads it smaller
	}
	if most == 0 {
		return
	}
	for len(c.batch) <= w {
		c.batch = append(c.batch, confBatch{})
	}
	c.batch[w] = confBatch{victim: v, tasks: tasks[:most], at: at[:most], since: since[:most], call: call, ret: ret, lead: slices.Clone(s.Local[w][:c.own])}
	c.h.Moved(tasks[:most])
}

// ivBatchTake is a take of x from worker w's deque (by w, or by a thief
// of w) whose premise failed: if x is the next task of w's open batch and
// still at the head of the victim's deque, the batch did include it, and
// it moves to the front of w's deque (the batch is below anything w pushed
// since). It returns whether it moved x.
func (c *Reader) ivBatchTake(w int, x int32) bool {
	if w < 0 || w >= len(c.batch) {
		return false
	}
	b := &c.batch[w]
	s := c.s
	if len(b.tasks) == 0 || b.tasks[0] != x {
		return false
	}
	h := b.at[0]
	q := s.Local[h]
	j := c.ivOwedHead(q)
	if k := slices.Index(q[:min(j+1, len(q))], x); k >= 0 && k < j {
		// x owes a take itself: this batch's steal is it, if called in
		// time (the obligation goes, to come back if the order tried
		// is refused: ivRestoreBatches).
		o := c.owed[x]
		if b.call >= o.deadline {
			return false
		}
		c.unowed = append(c.unowed, confUnowe{x, o})
		delete(c.owed, x)
		j = k
	}
	if len(q) <= j || q[j] != x {
		return false
	}
	s.Local[h] = slices.Concat(q[:j], q[j+1:])
	s.Local[w] = append([]int32{x}, s.Local[w]...)
	c.in++
	b.drop(1)
	// A batch stolen from w that counted on x at h finds it in w's deque.
	for i := range c.batch {
		o := &c.batch[i]
		if n := slices.Index(o.tasks, x); n >= 0 && o.at[n] == h {
			o.at = slices.Clone(o.at) // a new array: see ivSaveBatches
			o.at[n] = w
		}
	}
	c.ivPassed(w, []int32{x})
	c.moved = true
	return true
}

// ivBatchFront is where the tasks w's open batch is shown to have moved
// go in w's deque: behind the tasks that lead the batch there and are
// still at its head (a thief of w takes from the head; w itself, taking
// from there, would have closed the batch).
func (c *Reader) ivBatchFront(w int) int {
	q, lead := c.s.Local[w], c.batch[w].lead
	n := 0
	for n < len(q) && slices.Contains(lead, q[n]) {
		n++
	}
	return n
}

// ivTakeBack is a steal st (take e) by thief w of x from v, where x sits
// at the front of w's own deque because a take from v's deque behind it
// showed w's open batch held it (ivBatchPrefix, recorded in prefixed):
// if this steal was called before that take returned, it took x from v
// first, and the batch did not hold it. x goes back to v's head for the
// step. It returns whether the step was accepted (and applied).
func (c *Reader) ivTakeBack(idx int, e *traces.Event, st model.Step) bool {
	s := c.s
	w, v, x := st.Worker, st.Victim, int32(st.Task)
	if st.Rule != model.WORKER_STEAL || w < 0 || w >= len(c.prefixed) || v < 0 || v >= len(s.Local) {
		return false
	}
	p := &c.prefixed[w]
	if p.victim != v || len(p.tasks) == 0 || p.tasks[0] != x || e.Call >= p.ret || len(s.Local[w]) == 0 || s.Local[w][0] != x {
		return false
	}
	own, q := s.Local[w], s.Local[v]
	s.Local[w] = own[1:]
	s.Local[v] = append([]int32{x}, q...)
	if c.ivStepGlobal(idx, e, st) {
		p.tasks = p.tasks[1:]
		return true
	}
	s.Local[w], s.Local[v] = own, q
	return false
}

// ivBatchTakeUpTo moves the tasks of w's open batch up to x (a later one
// of them than the next) into w's deque, as ivBatchTake moves one, if
// each is where the batch expects it; else it changes nothing.
func (c *Reader) ivBatchTakeUpTo(w int, x int32) {
	if w < 0 || w >= len(c.batch) {
		return
	}
	j := slices.Index(c.batch[w].tasks, x)
	if j <= 0 {
		return
	}
	saved := c.ivSaveBatches()
	moved := slices.Clone(c.batch[w].tasks[:j+1])
	for _, y := range moved {
		if !c.ivBatchTake(w, y) {
			c.ivRestoreBatches(saved)
			c.moved = false
			return
		}
	}
	// ivBatchTake put each at the front: put them back in batch order.
	s := c.s
	slices.Reverse(s.Local[w][:len(moved)])
}

// ivOwedHead is how many tasks at the head of q owe a take (promised to
// takes that overlap the take that found them in front, and checked when
// those come): a batch's next task behind them is at the head for
// ivBatchTake, as a batch that cut them is counted behind them.
func (c *Reader) ivOwedHead(q []int32) int {
	j := 0
	for j < len(q) {
		if _, ok := c.owed[q[j]]; !ok {
			break
		}
		j++
	}
	return j
}

// ivPassed drops the tasks ts, which moved into thief w's deque, from the
// front of the open batches they passed through on the way: the batch w
// stole from (its victim's), and so on up the chain.
func (c *Reader) ivPassed(w int, ts []int32) {
	for range c.batch {
		if w < 0 || w >= len(c.batch) {
			return
		}
		w = c.batch[w].victim
		if w < 0 || w >= len(c.batch) {
			return
		}
		b := &c.batch[w]
		if len(b.tasks) < len(ts) || !slices.Equal(b.tasks[:len(ts)], ts) {
			return
		}
		b.drop(len(ts))
	}
}

// ivBatchPrefix is a take of x from worker v's deque (by v, or by a
// thief of v) whose premise failed because tasks are in front of x: if
// they are the first tasks of an open batch stolen from v (the thief i's),
// the batch included them (it was at least that long), so a take behind
// them shows that the steal moved them: they go to the front of i's
// deque, in order, behind the tasks that lead the batch there
// (ivBatchFront: i's own tasks kept in front at the steal, owed to its
// thieves; anything i pushed since is behind them; i took nothing of its
// own since the steal, or the batch would be closed). It
// returns the thief and how many tasks moved (0: none).
func (c *Reader) ivBatchPrefix(v int, x int32) (int, int) {
	s := c.s
	if v < 0 || v >= len(s.Local) {
		return -1, 0
	}
	q := s.Local[v]
	k := slices.Index(q, x)
	if k <= 0 {
		return -1, 0
	}
	for i := range c.batch {
		b := &c.batch[i]
		if i == v || len(b.tasks) < k || !slices.Equal(b.tasks[:k], q[:k]) || slices.ContainsFunc(b.at[:k], func(h int) bool { return h != v }) {
			continue
		}
		moved := slices.Clone(q[:k])
		p := c.ivBatchFront(i)
		s.Local[i] = slices.Concat(s.Local[i][:p], moved, s.Local[i][p:])
		s.Local[v] = q[k:]
		b.lead = append(slices.Clone(b.lead), moved...)
		b.drop(k)
		c.ivPassed(i, moved)
		// A batch stolen from i that counted on them finds them in i's
		// deque now.
		// (They are a run of its tasks, in the same order.)
		for j := range c.batch {
			o := &c.batch[j]
			n := slices.Index(o.tasks, moved[0])
			if n < 0 || o.at[n] != v {
				continue
			}
			o.at = slices.Clone(o.at) // a new array: see ivSaveBatches
			for m := 0; n < len(o.tasks) && m < len(moved) && o.tasks[n] == moved[m] && o.at[n] == v; n, m = n+1, m+1 {
				o.at[n] = i
			}
		}
		return i, k
	}
	return -1, 0
}

// BatchAfter keeps the open batches after a take by w of t (rule r,
// victim v for a steal; its interval [call, ret]): a steal opens w's
// batch (its size left open); a take by w of a task not in its batch
// closes it, and so does a take by another worker of a batch task from the
// victim's deque (the batch, taken from the head in one piece, did not
// reach it), unless that take overlaps the steal: then it came first, and
// the batch starts after it.
func (c *Reader) BatchAfter(r model.Rule, w, v int, t int32, call, ret uint64) {
	moved := c.moved
	c.moved = false
	for i := range c.batch {
		b := &c.batch[i]
		k := slices.Index(b.tasks, t)
		switch {
		case k < 0:
		case i != w && call < b.ret:
			// A take overlapping the steal, placed after it, took t
			// first: the batch is the tasks after t, as many.
			b.tasks = slices.Delete(b.tasks, k, k+1)
			b.at = slices.Delete(b.at, k, k+1)
			b.since = slices.Delete(b.since, k, k+1)
			if q := c.s.Local[b.victim]; len(q) > len(b.tasks) && q[len(b.tasks)] != 0 {
				b.tasks = append(b.tasks, q[len(b.tasks)])
				b.at = append(b.at, b.victim)
				b.since = append(b.since, b.call)
			}
		default:
			b.tasks, b.at, b.since = nil, nil, nil
		}
	}
	switch r {
	case model.WORKER_STEAL:
		c.ivBatchClose(w)
		c.ivOpenBatch(w, v, call, ret, moved)
	case model.POLL_LOCAL:
		if !moved {
			c.ivBatchClose(w)
		}
	case model.GLOBAL_STEAL:
		c.ivBatchClose(w)
	}
}

// ivBatchClose forgets w's open batch: a take showed that the rest of it
// was never moved (w took something else first, or stole again).
func (c *Reader) ivBatchClose(w int) {
	if w >= 0 && w < len(c.batch) {
		c.batch[w].tasks, c.batch[w].at, c.batch[w].since = nil, nil, nil
	}
}

// ivBatchBefore tries a batch steal (steal-last) as of when it began: the
// batch's bound is half of the victim's queue as the thief read it, and
// the takes from that queue that returned since the steal was called (the
// owner's, at its end; other thieves', at the head) had not shortened it
// yet. The queue is lengthened by as many places for the step (at the
// owner end: the batch, from the head up to the task it runs, never
// reaches them), then shortened again. It returns whether the step was
// accepted (and applied).
func (c *Reader) ivBatchBefore(e *traces.Event, st model.Step) bool {
	v := st.Victim
	if v < 0 || v >= len(c.s.Local) || v == st.Worker || e.Call == 0 {
		return false
	}
	pad := c.ivPad(v, e.Call)
	q := c.s.Local[v]
	n := len(q)
	for range pad {
		q = append(q, 0) // no task: a place only
	}
	c.s.Local[v] = q
	err := c.h.TakeStep(st, *e)
	q = c.s.Local[v]
	if err == nil {
		c.s.Local[v] = q[:len(q)-pad]
	} else {
		c.s.Local[v] = q[:n]
	}
	return err == nil
}

// CutOwed takes out, for a batch steal st (take e, steal-last), the
// tasks at the head of the victim's deque that owe a take this steal
// cannot be (called after their deadline): had the batch taken them,
// their obligation would fail, so the takes they owe took them before
// the thief read the deque (a later read would have made its CAS fail).
// Uncut puts them back at the head, owed, after the step.
func (c *Reader) CutOwed(st model.Step, e *traces.Event) []int32 {
	cfg := c.m.Config()
	v := st.Victim
	if st.Rule != model.WORKER_STEAL || !cfg.StealHalf || !cfg.StealLast || v < 0 || v >= len(c.s.Local) {
		return nil
	}
	q := c.s.Local[v]
	n := 0
	for n < len(q) && q[n] != int32(st.Task) {
		o, ok := c.owed[q[n]]
		if !ok || e.Call < o.deadline {
			break
		}
		n++
	}
	if n == 0 {
		return nil
	}
	front := slices.Clone(q[:n])
	c.s.Local[v] = q[n:]
	return front
}

func (c *Reader) Uncut(v int, front []int32) {
	c.s.Local[v] = append(front, c.s.Local[v]...)
}

// ivStealLast tries the batch steal st (steal-last) as of when it began
// (ivBatchBefore), then the same with the global queue hidden (the thief
// found it empty when it looked, before the steal), with the thief's own
// deque hidden (thieves of the thief emptied it before it looked), and
// with both; the tasks hidden owe as in Relax. It returns whether the
// step was accepted (and applied).
func (c *Reader) ivStealLast(idx int, e *traces.Event, st model.Step) bool {
	s := c.s
	w := st.Worker
	for _, v := range [...][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		own, global := v[0], v[1]
		if (own && len(s.Local[w]) == 0) || (global && len(s.Global) == 0) {
			continue
		}
		var o, g []int32
		if own {
			o, s.Local[w] = s.Local[w], nil
		}
		if global {
			g, s.Global = s.Global, nil
		}
		ok := c.ivBatchBefore(e, st)
		if own {
			c.ivOwnBack(w, o, ok)
		}
		if global {
			s.Global = g
		}
		if !ok {
			continue
		}
		for _, y := range o {
			c.oweTask(y, idx, e, fmt.Sprintf("w%d's own local queue held t%d", w, y))
		}
		if global {
			c.oweGlobal(idx, e, w, g)
		}
		return true
	}
	return false
}

// ivStepGlobal applies st (take e, event idx), or else the same with the
// global queue hidden: the worker found it empty when it looked, before
// the take (its tasks owe as in Relax). It returns whether the step was
// accepted (and applied).
func (c *Reader) ivStepGlobal(idx int, e *traces.Event, st model.Step) bool {
	if c.h.TakeStep(st, *e) == nil {
		return true
	}
	s := c.s
	if len(s.Global) == 0 || (st.Rule != model.WORKER_STEAL && st.Rule != model.POLL_LOCAL) {
		return false
	}
	g := s.Global
	s.Global = nil
	ok := c.h.TakeStep(st, *e) == nil
	s.Global = g
	if ok {
		c.oweGlobal(idx, e, st.Worker, g)
	}
	return ok
}

// ivStepOwn applies st (take e, event idx), or else the same with the
// taker's own deque hidden (thieves of it took those tasks, their events
// to come; they owe as in Relax). It returns whether the step was
// accepted (and applied).
func (c *Reader) ivStepOwn(idx int, e *traces.Event, st model.Step) bool {
	if c.h.TakeStep(st, *e) == nil {
		return true
	}
	s := c.s
	w := st.Worker
	if st.Rule != model.WORKER_STEAL || w < 0 || w >= len(s.Local) || len(s.Local[w]) == 0 {
		return false
	}
	o := s.Local[w]
	s.Local[w] = nil
	ok := c.h.TakeStep(st, *e) == nil
	c.ivOwnBack(w, o, ok)
	if ok {
		for _, y := range o {
			c.oweTask(y, idx, e, fmt.Sprintf("w%d's own local queue held t%d", w, y))
		}
	}
	return ok
}

// ivOwnBack puts back thief w's own tasks o, hidden from a take: in front
// of what the take moved into w's deque if it was accepted (ok; a batch
// steal's tasks go behind them, and c.own counts them for the batch
// rules), else alone.
func (c *Reader) ivOwnBack(w int, o []int32, ok bool) {
	if !ok {
		c.s.Local[w] = o
		return
	}
	c.s.Local[w] = append(slices.Clone(o), c.s.Local[w]...)
	c.own = len(o)
}

// ivGiveBack is a batch steal (steal-last) of x from v, by a thief whose
// steal e overlaps an earlier-placed batch steal from v by thief i that
// moved x into i's deque: the steals' CASes on v's head came in the other
// order, x to e's thief first, and i's batch began after it. The tasks of
// i's batch up to x (still at the front of i's deque, in order: i takes
// its own from the back) go back to the head of v's deque. It returns the
// thief i and how many tasks went back (0: none).
func (c *Reader) ivGiveBack(v int, x int32, e *traces.Event) (int, int) {
	s := c.s
	if v < 0 || v >= len(s.Local) {
		return -1, 0
	}
	for i := range c.last {
		b := &c.last[i]
		j := slices.Index(b.tasks, x)
		if i == int(e.Worker) || b.victim != v || j < 0 || e.Call >= b.ret || len(s.Local[i]) <= j || !slices.Equal(s.Local[i][:j+1], b.tasks[:j+1]) {
			continue
		}
		s.Local[v] = append(slices.Clone(b.tasks[:j+1]), s.Local[v]...)
		s.Local[i] = s.Local[i][j+1:]
		return i, j + 1
	}
	return -1, 0
}

// ivUngiveBack undoes ivGiveBack that returned thief i and k.
func (c *Reader) ivUngiveBack(i, k int) {
	s := c.s
	v := c.last[i].victim
	s.Local[i] = append(slices.Clone(s.Local[v][:k]), s.Local[i]...)
	s.Local[v] = s.Local[v][k:]
}

// ivForward is a take e of task y from thief i's deque (by i, or a thief
// of i), with y still in victim v's deque, owed by i's last batch steal
// from v (o), which the checker took as a batch of one task: the batch
// held y and the owed tasks behind it (those right in front of the task
// it ran), within half of the deque as the thief read it (less the owed
// tasks in front of y: taken before its read) and steal-max. They move to
// i's deque (its batch is below anything it pushed since), their
// obligations met. It returns whether it moved them.
func (c *Reader) ivForward(e *traces.Event, o confOwe) bool {
	s := c.s
	i := int(e.Worker)
	if e.Source == traces.SourceSteal {
		i = int(e.Victim)
	}
	if i < 0 || i >= len(c.fwd) || i >= len(s.Local) || c.fwd[i].idx != o.idx || o.ev.Worker != int32(i) {
		return false
	}
	f := &c.fwd[i]
	q := s.Local[f.victim]
	y := int32(e.Task)
	j := slices.Index(q, y)
	if j < 0 {
		return false
	}
	var moved []int32
	var rest []int32
	for n, t := range q {
		ow, ok := c.owed[t]
		switch {
		case n >= j && ok && ow.idx == o.idx:
			moved = append(moved, t)
		default:
			rest = append(rest, t)
		}
	}
	m := f.moved + len(moved) // the batch's tasks before the one it ran
	cut := f.front - m        // the owed tasks taken before the thief read
	if cut < 0 || m >= (f.length-cut+1)/2 {
		return false
	}
	if mx := c.m.Config().StealMax; mx > 0 && m+1 > mx {
		return false
	}
	s.Local[f.victim] = rest
	s.Local[i] = append(moved, s.Local[i]...)
	f.moved = m
	for _, t := range moved {
		delete(c.owed, t)
	}
	return true
}

// ivPad is how many tasks the takes from v's deque placed after tick
// call removed (Removed).
func (c *Reader) ivPad(v int, call uint64) int {
	pad := 0
	if v >= 0 && v < len(c.pops) {
		for _, p := range c.pops[v] {
			if p.seq > call {
				pad += p.removed
			}
		}
	}
	return pad
}

// ivMayClaim reports whether take e (a steal of t from thief i's deque)
// may find t moved there by a batch steal i has in flight: i is idle,
// its deque does not hold t, another deque does. Unless over, i's deque
// is empty; over (steal-last), it holds other tasks, which the steals
// overlapping e took first (ivClaim).
func (c *Reader) ivMayClaim(e *traces.Event, over bool) bool {
	s := c.s
	cfg := c.m.Config()
	i, t := int(e.Victim), int32(e.Task)
	if !cfg.StealHalf || (!cfg.StealLast && !cfg.OwnerFIFO) || e.Source != traces.SourceSteal || i < 0 || i >= len(s.Local) || i == int(e.Worker) || s.Cur[i] != 0 {
		return false
	}
	if over != (len(s.Local[i]) > 0) || over && (!cfg.StealLast || slices.Contains(s.Local[i], t)) {
		return false
	}
	if i < len(c.batch) && slices.Contains(c.batch[i].tasks, t) {
		return false // i's open batch (FIFO) may hold it: see ivBatchTake
	}
	for v, q := range s.Local {
		k := slices.Index(q, t)
		if v == i || k < 0 {
			continue
		}
		if !cfg.StealLast && k == 0 {
			return false // a FIFO batch runs the task in front of the ones it moves
		}
		return i >= len(c.claim) || c.claim[i].tasks == nil || c.claim[i].victim == v
	}
	return false
}

// ivClaim is a steal st (take e) of t from thief i's deque, which is
// empty, while t is in victim v's deque: i may have a batch steal from v
// in flight, whose CASes moved the tasks of v's head up to t into i's
// deque and which published them before its own event came (a batch
// steal's event comes when it returns). They move to i's deque for the
// step, and i's next take must be that steal: a steal from v called
// before this take returned (and before the deadlines of the
// obligations on them, which it takes over), its batch, with them in
// front, within half of v's deque (checked then, ivClaimed). It returns
// whether the step was accepted (and applied).
//
// Over (steal-last: the reading after ivClaim's), i's deque holds other
// tasks: they were there before i's batch was published behind them, and
// steals overlapping this one took them first (they owe, as in reorder);
// they stay in front of the claimed tasks.
func (c *Reader) ivClaim(idx int, e *traces.Event, st model.Step, over bool) bool {
	if !c.ivMayClaim(e, over) {
		return false
	}
	s := c.s
	i, t := st.Victim, int32(st.Task)
	v, j := -1, -1
	for u, q := range s.Local {
		if k := slices.Index(q, t); u != i && k >= 0 {
			v, j = u, k
			break
		}
	}
	// From a FIFO deque (steal-half alone) the batch runs v's head and
	// moves the tasks behind it: the head stays for the steal's event.
	q := s.Local[v]
	first := 0
	if !c.m.Config().StealLast {
		first = 1
		if i < len(c.claim) && c.claim[i].tasks != nil && c.claim[i].run != q[0] {
			return false
		}
	}
	end := j + 1 + c.extra // the search may read the claim longer
	if end > len(q) {
		return false
	}
	moved := slices.Clone(q[first:end])
	own := slices.Clone(s.Local[i]) // over: i's tasks, in front
	// In front of t for the step: i's own tasks (over), and, from a FIFO
	// deque, the claimed tasks in front of t (the steal runs the head of
	// i's deque): steals overlapping this one took them first.
	k := 0
	if first == 1 {
		k = j - 1
	}
	ahead := slices.Concat(own, moved[:k])
	s.Local[v] = slices.Concat(q[:first], q[end:])
	s.Local[i] = slices.Clone(moved[k:])
	if !c.ivStepOwn(idx, e, st) {
		s.Local[v] = q
		s.Local[i] = own
		return false
	}
	if len(ahead) > 0 {
		s.Local[i] = append(ahead, s.Local[i]...)
	}
	for len(c.claim) <= i {
		c.claim = append(c.claim, confClaim{})
	}
	cl := &c.claim[i]
	if cl.tasks == nil {
		*cl = confClaim{victim: v, deadline: e.Return, idx: idx, ev: *e, run: -1}
		if first == 1 {
			cl.run = q[0]
		}
	}
	cl.tasks = append(cl.tasks, moved...)
	c.in += len(moved)
	cl.deadline = min(cl.deadline, e.Return)
	for _, y := range moved {
		if o, ok := c.owed[y]; ok {
			cl.deadline = min(cl.deadline, o.deadline)
			delete(c.owed, y)
		}
	}
	// The tasks ahead were taken first, from i's deque, by steals
	// overlapping this one.
	for _, y := range ahead {
		c.oweTask(y, idx, e, fmt.Sprintf("t%d was in front of t%d on w%d's local queue", y, t, i))
	}
	return true
}

// ClaimBefore is the take e by w (rule r, victim v), before its step:
// if w has a claim (ivClaim), this take must be the batch steal it
// claimed, and the claimed tasks go back to the head of v's deque for
// the step, to be moved into w's deque with the batch (ClaimAfter).
func (c *Reader) ClaimBefore(e *traces.Event, r model.Rule, w, v int) error {
	if w >= len(c.claim) || c.claim[w].tasks == nil {
		return nil
	}
	cl := &c.claim[w]
	switch {
	case r != model.WORKER_STEAL || v != cl.victim:
		return c.failClaim(w, fmt.Sprintf("w%d's next take (event seq %d) is no steal from w%d", w, e.Seq, cl.victim))
	case e.Call >= cl.deadline:
		return c.failClaim(w, fmt.Sprintf("w%d's steal from w%d (seq %d) was called at tick %d, not before tick %d", w, v, e.Seq, e.Call, cl.deadline))
	case cl.run >= 0 && int32(e.Task) != cl.run:
		return c.failClaim(w, fmt.Sprintf("w%d's steal from w%d (seq %d) ran t%d, not t%d", w, v, e.Seq, e.Task, cl.run))
	}
	q := c.s.Local[v]
	k := 0 // a FIFO batch's tasks go back behind the task it runs
	if cl.run >= 0 {
		k = slices.Index(q, cl.run) + 1
		// Each claimed task was taken from w's deque before this steal's
		// event (by the claim, or, in front of it, by a steal the claim
		// owed it to), or is still there, behind the stolen one (a longer
		// claim): w's deque holds those alone, in order; they go back with
		// the others for the step, and return to w's deque after it
		// (ClaimAfterFIFO). A claimed task queued elsewhere is no task of
		// this batch.
		cl.kept = cl.kept[:0]
		for _, y := range cl.tasks {
			switch {
			case slices.Contains(c.s.Local[w], y):
				cl.kept = append(cl.kept, y)
			case slices.ContainsFunc(c.s.Local, func(l []int32) bool { return slices.Contains(l, y) }):
				return c.failClaim(w, fmt.Sprintf("t%d is still queued when w%d's steal from w%d (seq %d) comes", y, w, v, e.Seq))
			}
		}
		if !slices.Equal(c.s.Local[w], cl.kept) {
			return c.failClaim(w, fmt.Sprintf("w%d's deque holds %s when its steal from w%d (seq %d) comes", w, taskList32(c.s.Local[w]), v, e.Seq))
		}
		c.s.Local[w] = c.s.Local[w][:0]
	}
	c.s.Local[v] = slices.Concat(q[:k], cl.tasks, q[k:])
	return nil
}

// ClaimAfter checks, after the step of w's claimed batch steal, that
// the batch moved the claimed tasks (they lead w's deque), and takes
// them out again: they were taken from w's deque before.
func (c *Reader) ClaimAfter(w int) error {
	if w >= len(c.claim) || c.claim[w].tasks == nil {
		return nil
	}
	cl := &c.claim[w]
	own := c.s.Local[w][:c.own]
	q := c.s.Local[w][c.own:]
	if len(q) < len(cl.tasks) || !slices.Equal(q[:len(cl.tasks)], cl.tasks) {
		return c.failClaim(w, fmt.Sprintf("w%d's steal from w%d did not take them in its batch", w, cl.victim))
	}
	c.s.Local[w] = append(slices.Clone(own), q[len(cl.tasks):]...)
	cl.tasks = nil
	return nil
}

// ClaimAfterFIFO checks, after the step of w's claimed batch steal
// from a FIFO deque and the opening of its batch (ivOpenBatch), that the
// batch may hold the claimed tasks (they lead it), and takes them out of
// the victim's deque and the batch: they were taken before.
func (c *Reader) ClaimAfterFIFO(w int) error {
	if w >= len(c.claim) || c.claim[w].tasks == nil || c.claim[w].run < 0 {
		return nil
	}
	cl := &c.claim[w]
	n := len(cl.tasks)
	q := c.s.Local[cl.victim]
	if w >= len(c.batch) || len(c.batch[w].tasks) < n || !slices.Equal(c.batch[w].tasks[:n], cl.tasks) || len(q) < n || !slices.Equal(q[:n], cl.tasks) {
		return c.failClaim(w, fmt.Sprintf("w%d's steal from w%d did not take them in its batch", w, cl.victim))
	}
	c.s.Local[cl.victim] = q[n:]
	c.batch[w].drop(n)
	if len(cl.kept) > 0 {
		// The claimed tasks still in w's deque lead it; the batch held
		// no more (a longer claim reads more): a later task of it would
		// go to the front of w's deque, ahead of them (ivBatchTake).
		c.s.Local[w] = append(slices.Clone(cl.kept), c.s.Local[w]...)
		c.ivBatchClose(w)
	}
	cl.tasks, cl.kept = nil, nil
	return nil
}

// failClaim records the violation of w's claim at the take that made it.
func (c *Reader) failClaim(w int, what string) error {
	cl := &c.claim[w]
	premise := fmt.Sprintf("w%d has a batch steal in flight that moved %s (order intervals)", w, taskList32(cl.tasks))
	reason := fmt.Sprintf("w%d's deque did not hold t%d, w%d's did, so this take is accepted only if w%d's next take is a batch steal from w%d that took %s and was called before tick %d; %s", w, cl.ev.Task, cl.victim, w, cl.victim, taskList32(cl.tasks), cl.deadline, what)
	cl.tasks = nil
	return c.h.Fail(cl.idx, cl.ev, frame.Rule(&cl.ev), premise, reason)
}

func taskList32(ts []int32) string {
	l := make([]int64, len(ts))
	for i, t := range ts {
		l[i] = int64(t)
	}
	return frame.TaskList(l)
}

// BatchMoved settles, after a batch steal e by w (steal-last), the
// obligations on the tasks it moved into w's deque (all of it: a steal
// needs it empty): the steal removed them from the victim's deque within
// its interval, so an obligation whose take it overlaps is met.
func (c *Reader) BatchMoved(w int, e *traces.Event) {
	if w < 0 || w >= len(c.s.Local) {
		return
	}
	moved := c.s.Local[w][c.own:] // behind the own tasks kept (ivOwnBack)
	for _, y := range moved {
		if o, ok := c.owed[y]; ok && e.Call < o.deadline {
			delete(c.owed, y)
		}
	}
	for len(c.last) <= w {
		c.last = append(c.last, confLast{})
	}
	c.last[w] = confLast{victim: int(e.Victim), tasks: slices.Clone(moved), ret: e.Return}
	c.h.Moved(moved)
}
