package pool

import (
	"fmt"
	"slices"
	"time"
)

// The progress property, measured after the fact from the records of one
// case. Between any two recorded instants the state is constant: the
// weight running R (tasks that started and have not ended), the capacity
// in effect C (Config.Capacity or the drawn Options, then each Resize from
// its return), and the pending tasks (submitted, not yet started, not
// refused). The pool has room when C−R is at least the weight of every
// pending task (so that a FIFO semaphore whose head waiter does not fit
// is not blamed), or, with no stated capacity, when nothing runs at all.
// A stall is a stretch of time during which the pool has room and some
// task is pending; the longest stall must stay below
//
//	max(Config.ProgressFloor, Config.Progress × the median start delay)
//
// where the median start delay is the median, over the tasks of the same
// case, of the time from the call of Submit to the task's start. The
// finding names the task that waited through most of the stall and what
// the stall followed, judged where that task began to wait: a Resize (a grow that did not
// wake a blocked submitter), a task's panic or Goexit (a worker lost), a
// cancelled submit (the waiters behind it not woken), a task's end (a
// completion that woke nobody) or a Submit.
//
// The bound also grows by twice the lateness of a canary goroutine (one
// that sleeps a millisecond at a time) during the stall: on a loaded
// machine the process itself can go unscheduled for tens of
// milliseconds, and that is not the pool's doing.
//
// The analysis ends where a pool may legitimately stop serving: at Cancel,
// and at Close when it races the submitters. Tasks that never started
// belong to none-lost and no-hang, except when a hang is being described
// (ongoing), where they are what the stall is about.

type stall struct {
	from, to int64
	task     int // the task pending longest at the end of the stall
	running  int64
	cap      int
	trigger  string
}

// progress returns a progress finding (or, with ongoing, a description of
// the stall that is still going on at cutoff), or nil.
func (tr *tracker) progress(cutoff int64, ongoing bool) *Finding {
	if tr.cfg.Progress < 0 && !ongoing {
		return nil
	}
	if c := tr.cancelAt.Load(); c != 0 {
		cutoff = min(cutoff, c)
	}
	if c := tr.closeCallAt.Load(); c != 0 && tr.w.CloseEarly {
		cutoff = min(cutoff, c)
	}
	b := takeSweep()
	defer b.give()
	spans := tr.spans(b, cutoff, ongoing)
	tr.capMu.Lock()
	b.capLog = append(b.capLog[:0], tr.capLog...)
	tr.capMu.Unlock()
	capLog := b.capLog
	if !ongoing && waitedAtMost(spans, cutoff) <= int64(tr.cfg.ProgressFloor) {
		return nil
	}
	best, inBest, fulls := tr.longestStall(b, spans, capLog, cutoff)
	if !inBest || !ongoing && best.to-best.from <= int64(tr.cfg.ProgressFloor) {
		// The bound is at least the floor: a stall no longer than it is
		// no finding, and the median below (every pair of tasks) is
		// not needed.
		return nil
	}
	// The pool's own start delay: over the tasks that found room and no
	// task waiting when they were submitted (all tasks, if none did), so
	// that queueing behind a busy pool does not inflate the bound.
	delays := tr.startDelays(b, spans, capLog)
	slices.Sort(delays)
	var median int64
	if len(delays) > 0 {
		median = delays[len(delays)/2]
	}
	limit := max(int64(tr.cfg.ProgressFloor), int64(tr.cfg.Progress*float64(median)))
	// A stall during which the process itself went unscheduled (the
	// canary overslept) is the machine's, not the pool's: the bound grows
	// by twice the canary's lateness during the stall.
	late := tr.lateDuring(best.from, best.to)
	limit += 2 * late
	length := best.to - best.from
	if ongoing {
		if best.to < cutoff {
			return nil
		}
	} else if length <= limit {
		return nil
	}
	room := fmt.Sprintf("%d of %d running", best.running, best.cap)
	if best.cap <= 0 {
		room = "nothing running"
	}
	unit := "tasks"
	if tr.ab.weighted != nil {
		unit = "weight"
		room = fmt.Sprintf("weight %d of %d running", best.running, best.cap)
	}
	_ = unit
	// Name the task that waited through most of the stall.
	bestOverlap := int64(-1)
	for id, sp := range spans {
		if sp.sub == 0 {
			continue
		}
		if o := min(sp.pend, best.to) - max(sp.sub, best.from); o > bestOverlap {
			best.task, bestOverlap = id, o
		}
	}
	// What the stall followed is judged where the named task began to
	// wait in it: a stall is one stretch of room with some task pending,
	// and its start may be an earlier task's ordinary wait of a few
	// instants, before what held the named one back. A loss while it
	// waited, before its wait outgrew the bound, counts too: a task that
	// waits for a worker another task is about to take is not yet
	// stalled, and the worker's death meanwhile (a panic whose wakeup is
	// lost) is what leaves it waiting; a loss after that found it
	// stalled already.
	from := max(best.from, spans[best.task].sub)
	lastFull := int64(0)
	if i, _ := slices.BinarySearch(fulls, from+1); i > 0 {
		lastFull = fulls[i-1]
	}
	best.trigger = tr.trigger(from, min(best.to, from+limit), spans2(spans, func(s span) (int64, int64) { return s.pend, s.end }), capLog, lastFull)
	t := &tr.tasks[best.task]
	started := "had not started when the case ended"
	if s := t.startAt.Load(); s != 0 {
		started = fmt.Sprintf("started %s after submit", dur(s-t.submitAt.Load()))
	}
	return finding(Progress, best.trigger, "task %d %s; the pool had room for it (%s) for %s, from %s into the case, after %s; the pool's median start is %s (bound %s, with the scheduler %s late meanwhile)",
		best.task, started, room, dur(length), dur(best.from), best.trigger, dur(median), dur(limit), dur(late))
}

// span is one task's record as progress reads it: submitted at sub,
// pending until pend, running from start until end (0: never; a task
// still running ends at the cutoff).
type span struct{ sub, pend, start, end int64 }

// spans reads the tasks' records as progress sees them at cutoff, into
// b.spans.
func (tr *tracker) spans(b *sweep, cutoff int64, ongoing bool) []span {
	spans := resize(b.spans, len(tr.tasks))
	b.spans = spans
	for id := range tr.tasks {
		t := &tr.tasks[id]
		sp := span{sub: t.submitAt.Load(), start: t.startAt.Load(), end: t.endAt.Load()}
		switch {
		case sp.sub == 0:
		case sp.start != 0:
			sp.pend = sp.start
		case t.verdict.Load() == refused || t.verdict.Load() == panicked:
			sp.pend = t.returnAt.Load()
		case ongoing:
			sp.pend = cutoff
		default:
			sp.sub = 0 // never started: none-lost's business
		}
		if sp.start != 0 && sp.end == 0 {
			sp.end = cutoff
		}
		spans[id] = sp
	}
	return spans
}

// waitedAtMost bounds the longest stall up to cutoff: the tasks' waits
// (from submit to pend) up to cutoff, summed. A stall is a stretch of
// time during which some task is pending, each instant of it within a
// wait, so it is no longer than their union, and that no longer than
// the sum: with no more than the floor waited in all, no stall can be
// longer than the floor, and the sweep is not needed (under control,
// where the clock moves only while every goroutine is blocked, most
// cases wait far less in all).
func waitedAtMost(spans []span, cutoff int64) int64 {
	var sum int64
	for _, sp := range spans {
		if sp.sub != 0 && sp.sub < cutoff && sp.pend > sp.sub {
			sum += min(sp.pend, cutoff) - sp.sub
		}
	}
	return sum
}

// longestStall finds the longest stall up to cutoff, and the instants
// (in order) at which the pool ran at its capacity.
//
// Between two successive instants of the case (any span's ends, a
// Resize's return, 0 and the cutoff) the state is constant; at instant
// t0 a task runs if start <= t0 < end and is pending if sub <= t0 < pend.
// One sweep over the spans' ends in time order finds the state at each
// (a case of hundreds of tasks has a thousand instants: a scan of every
// span at each would be most of the suite's time per case). The
// instants are those of the sorted edges, merged with the few values no
// edge stands for (an empty span's, the Resizes'): one sort, not two. A
// task that starts stops pending at the same instant, so its start
// edge stands for both (a quarter fewer edges to sort); a pending task
// is taken off where the sweep reaches its start or its pend edge, and
// only the order of the submits among one instant's edges matters (the
// queue), which is that of the ids either way.
func (tr *tracker) longestStall(b *sweep, spans []span, capLog []capChange, cutoff int64) (stall, bool, []int64) {
	n := len(spans)
	edges := slices.Grow(b.edges[:0], 3*n)
	extra := append(b.extra[:0], 0, cutoff)
	for id, sp := range spans {
		started := sp.start != 0 && sp.end > sp.start
		if started {
			edges = append(edges, edge{sp.start, id, edgeStart}, edge{sp.end, id, edgeEnd})
		} else {
			extra = append(extra, sp.start, sp.end)
		}
		switch {
		case sp.sub == 0 || sp.pend <= sp.sub:
			extra = append(extra, sp.sub, sp.pend)
		case started: // pend is start: the start edge stands for it
			edges = append(edges, edge{sp.sub, id, edgeSub})
		default:
			edges = append(edges, edge{sp.sub, id, edgeSub}, edge{sp.pend, id, edgePend})
		}
	}
	inOrder := true // capLog in order of return, as resize appends it
	for i, c := range capLog {
		extra = append(extra, c.at)
		inOrder = inOrder && (i == 0 || capLog[i-1].at <= c.at)
	}
	b.keys = sortEdges(edges, b.keys, 44)
	slices.Sort(extra)
	b.edges, b.extra = edges, extra
	// The instants up to the cutoff: both lists merged, each once.
	times := b.times[:0]
	for i, j := 0, 0; i < len(edges) || j < len(extra); {
		var t int64
		if j == len(extra) || i < len(edges) && edges[i].at <= extra[j] {
			t, i = edges[i].at, i+1
		} else {
			t, j = extra[j], j+1
		}
		if t > cutoff {
			break
		}
		if len(times) == 0 || times[len(times)-1] != t {
			times = append(times, t)
		}
	}
	b.times = times
	maxW := 0
	for id := range tr.tasks {
		maxW = max(maxW, tr.tasks[id].weight)
	}
	pending := resize(b.pending, n)
	clear(pending)
	weights := resize(b.weights, maxW+1) // pending tasks by weight
	clear(weights)
	queue := b.queue[:0] // pending tasks in the order of their sub (then id): the oldest is the first still pending
	head := 0
	b.pending, b.weights = pending, weights
	var running int64
	heaviest := 0 // the largest weight pending
	next := 0
	returned := 0 // capLog[:returned] returned at or before t0 (inOrder)
	c0 := tr.capacity()
	search := stallSearch{fulls: b.fulls[:0]}
	for i := 0; i+1 < len(times); i++ {
		t0, t1 := times[i], times[i+1]
		for ; next < len(edges) && edges[next].at <= t0; next++ {
			e := edges[next]
			w := tr.tasks[e.id].weight
			switch e.kind {
			case edgeStart:
				running += int64(w)
				fallthrough
			case edgePend:
				if pending[e.id] {
					pending[e.id] = false
					weights[w]--
					for heaviest > 0 && weights[heaviest] == 0 {
						heaviest--
					}
				}
			case edgeEnd:
				running -= int64(w)
			case edgeSub:
				pending[e.id] = true
				queue = append(queue, e.id)
				weights[w]++
				heaviest = max(heaviest, w)
			}
		}
		for head < len(queue) && !pending[queue[head]] {
			head++
		}
		oldest := -1
		if head < len(queue) {
			oldest = queue[head]
		}
		var c int
		if inOrder {
			for returned < len(capLog) && capLog[returned].at <= t0 {
				returned++
			}
			c = c0
			if returned > 0 {
				c = capLog[returned-1].cap
			}
		} else {
			c = capAt(c0, capLog, t0)
		}
		search.step(t0, t1, oldest, running, heaviest, c)
	}
	b.queue, b.fulls = queue[:0], search.fulls
	return search.best, search.ok, search.fulls
}

// stallSearch follows the stalls from instant to instant: the longest
// (best, if ok), the one going on (cur, if inCur), and the instants at
// which the pool ran at its capacity (fulls, in order).
type stallSearch struct {
	best, cur stall
	ok, inCur bool
	fulls     []int64
}

// step takes the state over [t0, t1): the oldest pending task (-1: none),
// the weight running, the heaviest pending, the capacity in effect. The
// pool has room when the capacity less the weight running is at least
// the heaviest pending weight, or, with no capacity, when nothing runs.
func (s *stallSearch) step(t0, t1 int64, oldest int, running int64, heaviest, c int) {
	if c > 0 && running >= int64(c) {
		s.fulls = append(s.fulls, t0)
	}
	if !(oldest >= 0 && (c > 0 && int64(c)-running >= int64(heaviest) || c <= 0 && running == 0)) {
		s.inCur = false
		return
	}
	if !s.inCur {
		s.cur, s.inCur = stall{from: t0}, true
	}
	s.cur.to, s.cur.task, s.cur.running, s.cur.cap = t1, oldest, running, c
	if !s.ok || s.cur.to-s.cur.from > s.best.to-s.best.from {
		s.best, s.ok = s.cur, true
	}
}

// startDelays returns the start delays (start less submit) of the tasks
// that found room and no task waiting when they were submitted, or, if
// none did, of every task that started; in no particular order. b.edges
// are longestStall's, sorted.
//
// A task is judged at its submit instant q: running are the tasks with
// start <= q < end, waiting those (itself excepted) with sub < q < pend.
// The sweep over the edges has both at each submit edge, every edge at or
// before q applied: the tasks pending are those with sub <= q < pend, of
// which those submitted at q itself (the submit edges at q, itself among
// them) had not waited. A task with no submit edge (it started at the
// instant of its submit, as the wall clock may have it) is judged by a
// pass over every span.
func (tr *tracker) startDelays(b *sweep, spans []span, capLog []capChange) []int64 {
	c0 := tr.capacity()
	var all, fit []int64
	judge := func(id int, running int64, queued bool) {
		sp := spans[id]
		d := sp.start - sp.sub
		all = append(all, d)
		if c := capAt(c0, capLog, sp.sub); !queued && (c <= 0 && running == 0 || c > 0 && running+int64(tr.tasks[id].weight) <= int64(c)) {
			fit = append(fit, d)
		}
	}
	edges := b.edges
	pending := resize(b.pending, len(spans))
	clear(pending)
	b.pending = pending
	var running int64
	waiting := 0
	for i := 0; i < len(edges); {
		q := edges[i].at
		k, submits := i, 0
		for ; k < len(edges) && edges[k].at == q; k++ {
			e := edges[k]
			w := int64(tr.tasks[e.id].weight)
			switch e.kind {
			case edgeStart:
				running += w
				fallthrough
			case edgePend:
				if pending[e.id] {
					pending[e.id] = false
					waiting--
				}
			case edgeEnd:
				running -= w
			case edgeSub:
				pending[e.id] = true
				waiting++
				submits++
			}
		}
		for _, e := range edges[i:k] {
			if e.kind == edgeSub && spans[e.id].start != 0 {
				judge(e.id, running, waiting > submits)
			}
		}
		i = k
	}
	for id, sp := range spans {
		if sp.sub == 0 || sp.start == 0 || sp.pend > sp.sub {
			continue // not started, or judged above
		}
		running, queued := tr.atSubmit(spans, id)
		judge(id, running, queued)
	}
	if len(fit) == 0 {
		return all
	}
	return fit
}

// atSubmit is what task id found at its submit, by a pass over every
// span: the weight running, and whether another task was waiting.
func (tr *tracker) atSubmit(spans []span, id int) (running int64, queued bool) {
	q := spans[id].sub
	for j, o := range spans {
		if o.start != 0 && o.start <= q && q < o.end {
			running += int64(tr.tasks[j].weight)
		}
		queued = queued || j != id && o.sub != 0 && o.sub < q && q < o.pend
	}
	return running, queued
}

// capAt is the capacity in effect at t as progress counts it (from c0,
// each Resize from its return): that of the last Resize in the log that
// had returned by t.
func capAt(c0 int, capLog []capChange, t int64) int {
	c := c0
	for _, ch := range capLog {
		if ch.at <= t {
			c = ch.cap
		}
	}
	return c
}

func spans2[S any](s []S, f func(S) (int64, int64)) [][2]int64 {
	out := make([][2]int64, len(s))
	for i, x := range s {
		out[i][0], out[i][1] = f(x)
	}
	return out
}

// trigger names the event that gave the pool room at instant t: a
// Resize, a task's end (by panic, Goexit or return), a cancelled submit
// giving up, or a Submit; a worker's idle expiry or retirement
// (workers.go) counts as a loss. When the stall begins with a plain Submit or
// task end, the earliest loss before it or while the task waited
// (before until: the end of the stall or of the bound, whichever comes
// first) is named instead: that is where
// the pool first lost track of its room, and what came later found the
// pool already stalled (a task's panic after a grow the pool missed is
// not the cause). A loss is a grow (a Resize to more than the capacity
// before it), a task's panic or Goexit (a worker lost), each since the
// pool last ran at its capacity (full: a worker lost stays lost through
// later starts, until the pool shows it can fill its capacity again),
// or a cancelled submit since the pool last started a task (the waiters
// it failed to wake are served by the next start). A Resize that does
// not grow gives no room and is named only where the stall begins with
// it.
func (tr *tracker) trigger(t, until int64, pendEnd [][2]int64, capLog []capChange, full int64) string {
	grew := func(i int) bool {
		before := tr.w.Options.Capacity
		if i > 0 {
			before = capLog[i-1].cap
		}
		return capLog[i].cap > before
	}
	// The first task (by id) that ended at each instant, and the first
	// cancelled one that gave up at each: kind looks them up instead of
	// scanning every task for every instant it is asked about.
	ended, gaveUp := map[int64]int{}, map[int64]int{}
	idle, retired := tr.workerExits()
	for id, pe := range pendEnd {
		rec := &tr.tasks[id]
		if _, ok := ended[pe[1]]; !ok && rec.startAt.Load() != 0 {
			ended[pe[1]] = id
		}
		if _, ok := gaveUp[pe[0]]; !ok && rec.startAt.Load() == 0 && rec.cancelled.Load() {
			gaveUp[pe[0]] = id
		}
	}
	kind := func(at int64) (string, bool) {
		for i, c := range capLog {
			if c.at == at {
				return "Resize", at == t || grew(i)
			}
		}
		if id, ok := ended[at]; ok {
			switch tr.tasks[id].how.Load() {
			case endPanicked:
				return "task panic", true
			case endGoexit:
				return "task Goexit", true
			}
			return "task end", false
		}
		if _, ok := gaveUp[at]; ok {
			return "cancelled submit", true
		}
		if _, ok := slices.BinarySearch(idle, at); ok {
			return IdleExpiry, true
		}
		if _, ok := slices.BinarySearch(retired, at); ok {
			return WorkerRetired, true
		}
		return "Submit", false
	}
	if k, special := kind(t); special {
		return k
	}
	// Look back to the last start before t.
	var lastStart int64
	for id := range tr.tasks {
		if s := tr.tasks[id].startAt.Load(); s != 0 && s <= t {
			lastStart = max(lastStart, s)
		}
	}
	best, bestAt := "", int64(-1)
	consider := func(at int64) {
		if at >= until || at == t || bestAt >= 0 && at >= bestAt {
			return
		}
		k, special := kind(at)
		floor := min(full, lastStart)
		if k == "cancelled submit" {
			floor = lastStart
		}
		if special && at > floor {
			best, bestAt = k, at
		}
	}
	for _, c := range capLog {
		consider(c.at)
	}
	for _, pe := range pendEnd {
		consider(pe[0])
		consider(pe[1])
	}
	for _, at := range slices.Concat(idle, retired) {
		consider(at)
	}
	if best != "" {
		return best
	}
	k, _ := kind(t)
	return k
}

// dur formats nanoseconds with three significant digits.
func dur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond).String()
	}
	return d.String()
}
