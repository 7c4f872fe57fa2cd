package pool

import (
	"fmt"
	"slices"
	"time"

	"github.com/execspec/execspec/properties/pool/internal/sweep"
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
	b := sweep.Take()
	defer b.Give()
	spans := tr.spans(b, cutoff, ongoing)
	tr.capMu.Lock()
	b.CapLog = append(b.CapLog[:0], tr.capLog...)
	tr.capMu.Unlock()
	capLog, c0 := b.CapLog, tr.capacity()
	// No stall is longer than the tasks' waits in all (sweep.WaitedAtMost):
	// under control, where the clock moves only while every goroutine is
	// blocked, most cases wait no longer than the floor, and need no sweep.
	if !ongoing && sweep.WaitedAtMost(spans, cutoff) <= int64(tr.cfg.ProgressFloor) {
		return nil
	}
	best, inBest, fulls := b.LongestStall(spans, b.Weights, c0, capLog, cutoff)
	if !inBest || !ongoing && best.To-best.From <= int64(tr.cfg.ProgressFloor) {
		// The bound is at least the floor: a stall no longer than it is
		// no finding, and the median below is not needed.
		return nil
	}
	// The pool's own start delay: over the tasks that found room and no
	// task waiting when they were submitted (all tasks, if none did), so
	// that queueing behind a busy pool does not inflate the bound.
	delays := b.StartDelays(spans, b.Weights, c0, capLog)
	slices.Sort(delays)
	var median int64
	if len(delays) > 0 {
		median = delays[len(delays)/2]
	}
	limit := max(int64(tr.cfg.ProgressFloor), int64(tr.cfg.Progress*float64(median)))
	// A stall during which the process itself went unscheduled (the
	// canary overslept) is the machine's, not the pool's: the bound grows
	// by twice the canary's lateness during the stall.
	late := tr.lateDuring(best.From, best.To)
	limit += 2 * late
	length := best.To - best.From
	if ongoing {
		if best.To < cutoff {
			return nil
		}
	} else if length <= limit {
		return nil
	}
	room := fmt.Sprintf("%d of %d running", best.Running, best.Cap)
	if best.Cap <= 0 {
		room = "nothing running"
	}
	unit := "tasks"
	if tr.ab.weighted != nil {
		unit = "weight"
		room = fmt.Sprintf("weight %d of %d running", best.Running, best.Cap)
	}
	_ = unit
	// Name the task that waited through most of the stall.
	bestOverlap := int64(-1)
	for id, sp := range spans {
		if sp.Sub == 0 {
			continue
		}
		if o := min(sp.Pend, best.To) - max(sp.Sub, best.From); o > bestOverlap {
			best.Task, bestOverlap = id, o
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
	from := max(best.From, spans[best.Task].Sub)
	lastFull := int64(0)
	if i, _ := slices.BinarySearch(fulls, from+1); i > 0 {
		lastFull = fulls[i-1]
	}
	trigger := tr.trigger(from, min(best.To, from+limit), spans2(spans, func(s sweep.Span) (int64, int64) { return s.Pend, s.End }), capLog, lastFull)
	t := &tr.tasks[best.Task]
	started := "had not started when the case ended"
	if s := t.startAt.Load(); s != 0 {
		started = fmt.Sprintf("started %s after submit", dur(s-t.submitAt.Load()))
	}
	return finding(Progress, trigger, "task %d %s; the pool had room for it (%s) for %s, from %s into the case, after %s; the pool's median start is %s (bound %s, with the scheduler %s late meanwhile)",
		best.Task, started, room, dur(length), dur(best.From), trigger, dur(median), dur(limit), dur(late))
}

// spans reads the tasks' records as progress sees them at cutoff, into
// b.Spans, and their weights into b.Weights.
func (tr *tracker) spans(b *sweep.Buf, cutoff int64, ongoing bool) []sweep.Span {
	spans := sweep.Sized(b.Spans, len(tr.tasks))
	weights := sweep.Sized(b.Weights, len(tr.tasks))
	b.Spans, b.Weights = spans, weights
	for id := range tr.tasks {
		t := &tr.tasks[id]
		sp := sweep.Span{Sub: t.submitAt.Load(), Start: t.startAt.Load(), End: t.endAt.Load()}
		switch {
		case sp.Sub == 0:
		case sp.Start != 0:
			sp.Pend = sp.Start
		case t.verdict.Load() == refused || t.verdict.Load() == panicked:
			sp.Pend = t.returnAt.Load()
		case ongoing:
			sp.Pend = cutoff
		default:
			sp.Sub = 0 // never started: none-lost's business
		}
		if sp.Start != 0 && sp.End == 0 {
			sp.End = cutoff
		}
		spans[id], weights[id] = sp, t.weight
	}
	return spans
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
			before = capLog[i-1].Cap
		}
		return capLog[i].Cap > before
	}
	// The first task (by id) that ended at each instant, a panic or a
	// Goexit before a plain end (under control many events share an
	// instant of virtual time, and a worker lost at the instant the stall
	// begins is its cause, whatever else ended then), and the first
	// cancelled one that gave up at each: kind looks them up instead of
	// scanning every task for every instant it is asked about.
	ended, gaveUp := map[int64]int{}, map[int64]int{}
	idle, retired := tr.workerExits()
	for id, pe := range pendEnd {
		rec := &tr.tasks[id]
		if rec.startAt.Load() != 0 {
			if first, ok := ended[pe[1]]; !ok || tr.tasks[first].how.Load() == endReturned && rec.how.Load() != endReturned {
				ended[pe[1]] = id
			}
		}
		if _, ok := gaveUp[pe[0]]; !ok && rec.startAt.Load() == 0 && rec.cancelled.Load() {
			gaveUp[pe[0]] = id
		}
	}
	kind := func(at int64) (string, bool) {
		for i, c := range capLog {
			if c.At == at {
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
		consider(c.At)
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
