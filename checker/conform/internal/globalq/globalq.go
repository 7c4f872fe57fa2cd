package globalq

import "math"

// Index is the index of one trace's global queue: the order of its tasks,
// their priorities and ages, and the return ticks of their pushes. It is
// not safe for concurrent use; New makes one.
type Index struct {
	byTicket []int32 // queued tasks by ticket (index); 0 where a task left
	next     []int32 // by ticket: itself while queued, else a later ticket (path-compressed: the next queued is found in amortized O(1))
	head     int     // index of the head in byTicket (all before it left)
	task     []task  // by task - 1
	shift    int64   // tasks taken from the head of the model's slice
	pushes   int64   // tasks queued so far
	n        int     // tasks queued
	dirty    bool    // the model's slice is not in ticket order

	// Priority (v1.1): a heap of the queued tasks; aging by counting.
	prio  *prioHeap
	takes int64 // GLOBAL-STEALs checked by the priority pick

	// Order intervals: the return tick of each queued task's push, by
	// ticket; math.MaxUint64 once the task owes an obligation.
	rets *minTree
}

// task is what the index keeps of a task: one place, for the takes in an
// order that jumps from task to task.
type task struct {
	ticket int32 // its ticket while queued, else -1
	at     int64 // its index in the model's slice, + shift
	seq    int64 // pushes before it was last queued: its place in the order, never renumbered
	queued int64 // priority: takes when it was last queued
}

// New returns the index of an empty global queue, with the priority heap
// (priority) and the tree of push return ticks (intervals) when asked.
func New(priority, intervals bool) *Index {
	g := &Index{}
	if priority {
		g.prio = &prioHeap{g: g}
	}
	if intervals {
		g.rets = &minTree{}
	}
	return g
}

func (g *Index) grow(t int) {
	for len(g.task) < t {
		g.task = append(g.task, task{ticket: -1})
	}
}

// Has reports whether t is queued.
func (g *Index) Has(t int32) bool {
	return t >= 1 && int(t) <= len(g.task) && g.task[t-1].ticket >= 0
}

// First returns the head, or 0 when the queue is empty.
func (g *Index) First() int32 {
	g.head = g.live(g.head)
	if g.head == len(g.byTicket) {
		return 0
	}
	return g.byTicket[g.head]
}

// live returns the first ticket from k on whose task is queued, or
// len(byTicket).
func (g *Index) live(k int) int {
	r := k
	for r < len(g.next) && int(g.next[r]) != r {
		r = int(g.next[r])
	}
	for k < r { // compress the path
		k, g.next[k] = int(g.next[k]), int32(r)
	}
	return r
}

// FirstN returns the first max tasks of the queue, in order: O(max),
// amortized.
func (g *Index) FirstN(max int) []int32 {
	var out []int32
	for k := g.live(g.head); k < len(g.byTicket) && len(out) < max; k = g.live(k + 1) {
		out = append(out, g.byTicket[k])
	}
	return out
}

// Pushed notes the tasks the model appended to its slice q since the last
// call: it holds g.n tasks known and then the new ones. ret returns the
// return tick of a task's push (order intervals).
func (g *Index) Pushed(q []int32, ret func(int32) uint64) {
	for i := g.n; i < len(q); i++ {
		t := q[i]
		g.grow(int(t))
		g.compact()
		k := int32(len(g.byTicket))
		g.byTicket = append(g.byTicket, t)
		g.next = append(g.next, k)
		g.task[t-1] = task{ticket: k, at: int64(i) + g.shift, seq: g.pushes, queued: g.takes}
		g.pushes++
		g.n++
		if g.rets != nil {
			g.rets.set(int(k), ret(t))
		}
		if g.prio != nil {
			g.prio.push(t)
		}
	}
}

// Popped notes that the model took t, the first of its slice q (q is the
// slice after the take), and swaps the new head first.
func (g *Index) Popped(t int32, q []int32) {
	g.shift++
	k := g.task[t-1].ticket
	g.byTicket[k] = 0
	g.next[k] = k + 1
	g.task[t-1].ticket = -1
	g.n--
	if g.rets != nil {
		g.rets.set(int(k), math.MaxUint64)
	}
	if h := g.First(); h != 0 {
		g.SwapFirst(q, h)
	}
}

// SwapFirst moves queued task t to the front of the model's slice q,
// swapping it with the task there.
func (g *Index) SwapFirst(q []int32, t int32) {
	i := g.task[t-1].at - g.shift
	if i == 0 {
		return
	}
	u := q[0]
	q[0], q[i] = t, u
	g.task[t-1].at, g.task[u-1].at = g.shift, i+g.shift
	g.dirty = true
}

// InOrder puts the model's slice q back in ticket order: O(n).
func (g *Index) InOrder(q []int32) {
	if !g.dirty || len(q) != g.n {
		return // in order, or hidden from a take being tried
	}
	i := 0
	for _, t := range g.byTicket[g.head:] {
		if t != 0 {
			q[i] = t
			g.task[t-1].at = int64(i) + g.shift
			i++
		}
	}
	g.dirty = false
}

// compact drops the holes of byTicket when they are more than half of it,
// keeping the order (tickets are only compared): amortized O(1) a push.
func (g *Index) compact() {
	if len(g.byTicket) < 64 || len(g.byTicket) < 2*g.n {
		return
	}
	var rets []uint64
	if g.rets != nil {
		rets = make([]uint64, 0, g.n)
	}
	j := 0
	for k, t := range g.byTicket[g.head:] {
		if t == 0 {
			continue
		}
		g.byTicket[j] = t
		g.next[j] = int32(j)
		g.task[t-1].ticket = int32(j)
		if g.rets != nil {
			rets = append(rets, g.rets.get(g.head+k))
		}
		j++
	}
	g.byTicket = g.byTicket[:j]
	g.next = g.next[:j]
	g.head = 0
	if g.rets != nil {
		g.rets.reset(rets)
	}
}

// TicketOf is queued task t's ticket.
func (g *Index) TicketOf(t int32) int { return int(g.task[t-1].ticket) }

// Owe calls f for each queued task with a ticket below end (every queued
// task if end is -1) whose push returned at or before tick, at most once
// per task: such a task is to owe an obligation, which it keeps until it
// is taken. A compaction (a push) renumbers the tickets: end must be read
// after the last push.
func (g *Index) Owe(end int, tick uint64, f func(int32)) {
	if end < 0 {
		end = len(g.byTicket)
	}
	g.rets.take(g.head, end, tick, func(k int) { f(g.byTicket[k]) })
}

// SetRet updates the return tick of queued task t's push, unless t
// already owes an obligation.
func (g *Index) SetRet(t int32, ret uint64) {
	if g.rets == nil || !g.Has(t) {
		return
	}
	if k := g.TicketOf(t); g.rets.get(k) != math.MaxUint64 {
		g.rets.set(k, ret)
	}
}

// Passed is how often queued task t was passed over, up to aging.
func (g *Index) Passed(t int32, aging int) int {
	if aging == 0 || !g.Has(t) {
		return 0
	}
	return int(min(int64(aging), g.takes-g.task[t-1].queued))
}

// Pick is the priority policy's pick (model.Model's pick): the first task
// Passed over at least aging times, which is the head if any is, else the
// First task of the highest priority. aged says which.
func (g *Index) Pick(aging int) (t int32, aged bool) {
	h := g.First()
	if h == 0 {
		return 0, false
	}
	if aging > 0 && g.Passed(h, aging) >= aging {
		return h, true
	}
	return g.prio.top(), false
}

// prioHeap is a binary heap of the queued tasks, highest priority first,
// then first queued. Its entries carry their keys, so that the heap reads
// nothing else; an entry whose task left the queue, or whose priority
// changed, is dropped when it comes to the top (a change pushes a new
// entry), and the heap is rebuilt when such entries are half of it.
type prioHeap struct {
	g    *Index
	prio *[]int32 // by task - 1 (the checker's table; grows)
	h    []prioEntry
}

type prioEntry struct {
	prio int32
	task int32
	seq  int64 // the task's task.seq when the entry was pushed
}

func (a prioEntry) less(b prioEntry) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	return a.seq < b.seq
}

func (p *prioHeap) priority(t int32) int32 {
	if int(t) <= len(*p.prio) {
		return (*p.prio)[t-1]
	}
	return 0
}

// live reports whether e stands for its task as queued now.
func (p *prioHeap) live(e prioEntry) bool {
	return p.g.Has(e.task) && p.g.task[e.task-1].seq == e.seq && p.priority(e.task) == e.prio
}

// top returns the queued task of the highest priority, first queued.
func (p *prioHeap) top() int32 {
	for !p.live(p.h[0]) {
		last := len(p.h) - 1
		p.h[0] = p.h[last]
		p.h = p.h[:last]
		p.down(0)
	}
	return p.h[0].task
}

func (p *prioHeap) push(t int32) {
	if len(p.h) >= 64 && len(p.h) >= 2*p.g.n {
		live := p.h[:0]
		for _, e := range p.h {
			if p.live(e) {
				live = append(live, e)
			}
		}
		p.h = live
		for i := len(p.h)/2 - 1; i >= 0; i-- {
			p.down(i)
		}
	}
	p.h = append(p.h, prioEntry{prio: p.priority(t), task: t, seq: p.g.task[t-1].seq})
	p.up(len(p.h) - 1)
}

// changed notes that task t's priority changed.
func (p *prioHeap) changed(t int32) {
	if p.g.Has(t) {
		p.push(t)
	}
}

func (p *prioHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !p.h[i].less(p.h[parent]) {
			return
		}
		p.h[i], p.h[parent] = p.h[parent], p.h[i]
		i = parent
	}
}

func (p *prioHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(p.h) {
			return
		}
		m := l
		if r := l + 1; r < len(p.h) && p.h[r].less(p.h[l]) {
			m = r
		}
		if !p.h[m].less(p.h[i]) {
			return
		}
		p.h[i], p.h[m] = p.h[m], p.h[i]
		i = m
	}
}

// minTree is a segment tree of uint64 values by index, which finds and
// clears every value at most a bound in a range in O((1 + found) log n).
type minTree struct {
	size int      // leaves: a power of two
	v    []uint64 // v[1] the root; leaves at size..2·size-1
}

func (m *minTree) get(k int) uint64 {
	if k >= m.size {
		return math.MaxUint64
	}
	return m.v[m.size+k]
}

func (m *minTree) set(k int, x uint64) {
	if k >= m.size {
		vals := make([]uint64, k+1)
		for i := range vals {
			vals[i] = m.get(i)
		}
		vals[k] = x
		m.reset(vals)
		return
	}
	i := m.size + k
	m.v[i] = x
	for i /= 2; i >= 1; i /= 2 {
		m.v[i] = min(m.v[2*i], m.v[2*i+1])
	}
}

// reset rebuilds the tree on vals (index k: vals[k]), with room to double.
func (m *minTree) reset(vals []uint64) {
	m.size = 64
	for m.size < 2*len(vals) {
		m.size *= 2
	}
	m.v = make([]uint64, 2*m.size)
	for i := range m.v {
		m.v[i] = math.MaxUint64
	}
	copy(m.v[m.size:], vals)
	for i := m.size - 1; i >= 1; i-- {
		m.v[i] = min(m.v[2*i], m.v[2*i+1])
	}
}

// take calls f(k), lowest k first, for every k in [lo, hi) whose value is
// at most bound, and sets those values to math.MaxUint64.
func (m *minTree) take(lo, hi int, bound uint64, f func(int)) {
	if m.size == 0 {
		return
	}
	m.takeIn(1, 0, m.size, lo, hi, bound, f)
}

func (m *minTree) takeIn(i, l, r, lo, hi int, bound uint64, f func(int)) {
	if r <= lo || hi <= l || m.v[i] > bound {
		return
	}
	if r-l == 1 {
		m.v[i] = math.MaxUint64
		f(l)
	} else {
		mid := (l + r) / 2
		m.takeIn(2*i, l, mid, lo, hi, bound, f)
		m.takeIn(2*i+1, mid, r, lo, hi, bound, f)
	}
	m.v[i] = math.MaxUint64
	if r-l > 1 {
		m.v[i] = min(m.v[2*i], m.v[2*i+1])
	}
}

// SetPriorities makes the priority heap read the tasks' priorities from
// *p, by task id - 1 (the checker's table, which grows).
func (g *Index) SetPriorities(p *[]int32) { g.prio.prio = p }

// Prioritized reports whether the index keeps the priority heap.
func (g *Index) Prioritized() bool { return g.prio != nil }

// PriorityChanged notes that task t's priority changed.
func (g *Index) PriorityChanged(t int32) { g.prio.changed(t) }

// Took notes a GLOBAL-STEAL that the priority pick checked: every task
// still queued was passed over once more.
func (g *Index) Took() { g.takes++ }

// Dirty reports whether the model's slice is out of queue order (InOrder
// puts it back; FirstN reads the order without it).
func (g *Index) Dirty() bool { return g.dirty }

// ToFront moves queued task t to the front of the model's global queue *q
// (the model then takes it there) and returns a function that puts it
// back, if the take is not applied.
func (g *Index) ToFront(q *[]int32, t int32) (undo func()) {
	h := g.First()
	if h == t {
		return func() {}
	}
	g.SwapFirst(*q, t)
	return func() { g.SwapFirst(*q, h) }
}
