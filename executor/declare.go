package executor

import "time"

// What an executor states about itself, so that a check holds it to what it
// promises and no more. Each is an optional ability, found by type
// assertion; an executor that states nothing is checked for what every
// executor owes, and the figures of the rest are reported as information.

// BoundedWait is an executor that states its fairness bound in time: the
// longest a task that became ready waits before its next poll begins, for n
// tasks that keep becoming ready (time-sliced designs, whose polls of
// other tasks within a slice cannot be counted). It returns 0 if it states
// none. An executor may state a bound in polls (Bounded), in time, or
// neither.
//
// The margins the properties suite allows, and why. A bound d in time: a
// task fails when it waited more than 3d + 500 ms, for the clock's and the
// operating system's share (a loaded machine deschedules a worker for tens
// of milliseconds, and a slice that ends while its worker is descheduled
// ends late; under the race detector at a load of 12 on 2 cores, a fair
// executor with 20 ms slices kept tasks waiting 454 ms); it is checked on
// black-box cases only, since under a controller time means nothing. A
// bound b in polls (Bounded): a task fails when every worker ended more
// than b + 2W polls of other tasks (W workers) between its becoming ready
// and its poll. Each worker is counted apart: one worker can hold a ready
// task (in its local queue, between its take and its poll, between a
// poll's end and the re-queue of a task woken then) while the operating
// system stops it and the others poll their own tasks, which is no fault
// of the executor's order. The 2W: a take is not seen from outside, so
// each worker may have taken a task before this one became ready and
// polled it after, and likewise between a poll's end and the re-queue of
// a NOTIFIED task. Without any statement the default bound is 1,000 polls
// of other tasks by every worker and 1 s of waiting (300 polls under a
// controller); see FairnessPromiser.
type BoundedWait interface {
	FairnessWait(n int) time.Duration
}

// SpuriousPoller is an executor that states whether it may poll a task
// that was not woken since its previous poll. The waker contract allows
// such spurious polls (a future must cope with them), so they are counted
// and reported, not failed; an executor that states false here is wake
// driven and is held to it: every poll after the first must be owed to a
// wake of its own.
type SpuriousPoller interface {
	PollsSpuriously() bool
}

// PollsSpuriously implements SpuriousPoller: the executors with one shared
// queue poll a task only after its spawn or a wake.
func (e *shared) PollsSpuriously() bool { return false }

// PollsSpuriously implements SpuriousPoller: a Timeslice executor re-polls
// a task within its slice; it states no more than the contract.
func (e *Timeslice) PollsSpuriously() bool { return true }

// PollsSpuriously implements SpuriousPoller: a WorkSteal executor polls a
// task only after its spawn or a wake.
func (e *WorkSteal) PollsSpuriously() bool { return false }

// PollsSpuriously implements SpuriousPoller with the inner executor's
// statement; an inner executor that states nothing may poll spuriously.
func (m *Monitored) PollsSpuriously() bool {
	if s, ok := m.inner.(SpuriousPoller); ok {
		return s.PollsSpuriously()
	}
	return true
}

// FairnessWait implements BoundedWait with the inner executor's bound, or 0.
func (m *Monitored) FairnessWait(n int) time.Duration {
	if b, ok := m.inner.(BoundedWait); ok {
		return b.FairnessWait(n)
	}
	return 0
}

// FairnessPromiser is an executor that states whether it promises fairness
// at all: that a task which stays ready is polled again and again while
// the executor polls others (□◇ready ⇒ □◇polled). Without a statement an
// executor is held to it, within a default bound generous enough for any
// fair design (properties: 1,000 polls of other tasks by every worker and
// 1 s of waiting; a stated bound, Bounded or BoundedWait, replaces it). An
// executor that states false here (a strict priority scheduler without
// aging, by design) is not: its longest wait and a task it seemingly
// starved are reported as information.
type FairnessPromiser interface {
	PromisesFairness() bool
}

// PromisesFairness implements FairnessPromiser: a WorkSteal executor
// whose owner takes from the tail of its local queue (LIFO, the default)
// promises no fairness. A task that wakes itself during its poll is
// re-queued at that end and taken again at once, so the tasks below it in
// the same local queue wait while it keeps waking itself, unless another
// worker steals them (the global-queue check does not reach them): the
// fairness property found a task passed over for more than 300 polls of
// others behind a self-waking task. With OwnerFIFO it promises fairness.
func (e *WorkSteal) PromisesFairness() bool { return e.cfg.OwnerFIFO }

// PromisesFairness implements FairnessPromiser with the inner executor's
// statement; an inner executor that states nothing promises fairness.
func (m *Monitored) PromisesFairness() bool {
	if f, ok := m.inner.(FairnessPromiser); ok {
		return f.PromisesFairness()
	}
	return true
}
