package properties

import (
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/execspec/execspec/executor"
)

// Fairness that fits the executor. An executor states its bound in polls
// (executor.Bounded), in time (executor.BoundedWait), that it promises no
// fairness at all (executor.FairnessPromiser false), or nothing; the user
// may set a bound for it (Config.FairnessBound, Config.FairnessWait, the
// FairnessBound and FairnessWait options), which the executor's own bound
// overrides. The check holds it to what is stated:
//
//	stated       a ready task fails the check when
//	polls b      b + 2W polls of other tasks began between its becoming ready and its poll (W workers: takes before it was ready are not seen from outside), or more than max(b+2W, starveLimit) while it is still waiting
//	time d       it waited longer than waitLimit(d) = 3d + 500 ms by the clock (black-box cases only: under a controller time means nothing)
//	nothing      the default bound: more than starveLimit (1,000) polls of other tasks began while it was ready and it waited more than defaultStarveTime (1 s), by the clock and by the process's CPU time (waitedDefault); under a controller more than starveLimitControlled (300) polls, and no clock
//	no fairness  never: the figures (the most polls of others between ready and poll, the longest wait, a task seemingly starved) are reported as information
//
// Why the default is what it is: a fair design, whatever its order, polls
// a ready task of a fairness case (at most 9 endless tasks) within a few
// dozen polls of others (a global-queue check every 61 polls included);
// only designs that poll one task many times in a row, time slices, go
// beyond 1,000, and they do it for at most the other tasks' slices: 80 ms
// for slices of 10 ms. One second is twelve times that and twice the
// longest a fair executor's task was seen to wait on a loaded machine under
// the race detector (454 ms, 20 ms slices, load 12 on 2 cores). A starving
// executor never polls the task, so the margin costs only the time of a
// failing case. A design with longer slices states its bound
// (executor.BoundedWait).
//
// In every case a task counts against the executor only when every worker
// polled other tasks meanwhile (allWorkersPolledSince): a worker that the
// operating system (or a schedule) descheduled between its take and its
// poll holds its task without the executor's fault. For the same reason,
// with more than one worker only the polls of others that began before the
// poller's own previous poll ended count: it took the task after that.
type fairMode uint8

const (
	fairUnchecked fairMode = iota // not a fairness case
	fairDefault                   // nothing stated: the default bound
	fairPolls                     // a bound in polls of other tasks
	fairTime                      // a bound in time
	fairOff                       // the executor promises no fairness: figures only
)

func (m fairMode) String() string {
	return [...]string{"", "default", "polls", "time", "none promised"}[m]
}

// setFairness reads what ex states for n endless tasks, and what cfg sets.
func (r *caseRun) setFairness(ex executor.Executor, n int, cfg *Config) {
	r.mode, r.budget = fairDefault, starveLimit
	if r.sched != nil {
		// Under control no operating system intervenes: a smaller
		// limit, still far above any fair policy's delay.
		r.budget = starveLimitControlled
	}
	if f, ok := ex.(executor.FairnessPromiser); ok && !f.PromisesFairness() {
		r.mode = fairOff
	}
	if cfg.FairnessBound > 0 {
		r.mode, r.bound = fairPolls, cfg.FairnessBound
	}
	if cfg.FairnessWait > 0 {
		r.mode, r.wait = fairTime, cfg.FairnessWait
	}
	if b, ok := ex.(executor.Bounded); ok {
		if x := b.FairnessBound(n); x >= 0 {
			r.mode, r.bound = fairPolls, x
		}
	}
	if b, ok := ex.(executor.BoundedWait); ok {
		if d := b.FairnessWait(n); d > 0 {
			r.mode, r.wait = fairTime, d
		}
	}
	if d, ok := ex.(executor.Describer); ok {
		r.workers = d.Describe().Workers
	}
	if r.mode == fairPolls {
		r.budget = max(r.budget, int64(r.bound)+r.slack())
	}
}

// slack is the polls of other tasks a ready task may see begin beyond the
// executor's figure: from outside, a take is not seen, so each worker may
// have taken a task before this one became ready and begun its poll after;
// the same holds for the executor's work after a poll returns, before a
// NOTIFIED task is queued again: twice the workers.
func (r *caseRun) slack() int64 { return 2 * int64(max(r.workers, 1)) }

// waitLimit is how long past its stated wait a ready task may wait before
// it counts as starved: three times the bound and half a second, for the
// clock's and the operating system's share (a time slice that ends while
// its worker is descheduled ends late, so the share grows with the bound). A loaded machine deschedules
// for tens of milliseconds; under the race detector, with a load of 12 on
// 2 cores, a fair executor with 20ms slices kept 5 tasks waiting 454ms.
func waitLimit(d time.Duration) time.Duration { return 3*d + 500*time.Millisecond }

// polledReady is the poll (the n-th of the case) of p, which was ready:
// it measures the delay and the wait and checks them against the stated
// bound. Called with p.mu held.
func (r *caseRun) polledReady(p *probe, n int64, cur int) {
	delay := n - 1 - p.readyAt
	if delay > r.maxDelay.Load() {
		r.maxDelay.Store(delay)
	}
	wait := time.Since(p.readySince)
	if int64(wait) > r.maxWait.Load() {
		r.maxWait.Store(int64(wait))
	}
	switch r.mode {
	case fairPolls:
		// The poller took p after its own previous poll ended; polls of
		// others that began after that may have run while it held p,
		// descheduled between its take and this poll, which is no fault
		// of the executor's order.
		delay = r.ownDelay(p, delay, cur)
		slack := r.slack()
		if delay > int64(r.bound)+slack && (r.workers == 1 || (r.sched != nil || wait > starveTime) && r.allWorkersPolledSince(p, cur)) {
			r.violate(checkFairness, "task %d waited %d polls of other tasks between becoming ready and its poll; the executor states a bound of %d for %d tasks (%d allowed for polls begun after takes that came before it was ready)", p.id, delay, r.bound, len(r.probes), slack)
		}
	case fairDefault:
		delay = r.ownDelay(p, delay, cur)
		if delay > r.budget && (r.sched != nil || r.waitedDefault(p, wait)) && r.allWorkersPolledSince(p, cur) {
			r.violate(checkFairness, "task %d waited %d polls of other tasks (%v) between becoming ready and its poll; the executor states no bound, and the default is %s", p.id, delay, wait.Round(time.Millisecond), r.defaultBound())
		}
	case fairTime:
		if r.sched == nil && wait > waitLimit(r.wait) && r.allWorkersPolledSince(p, cur) {
			r.violate(checkFairness, "task %d waited %v between becoming ready and its poll; the executor states a bound of %v for %d tasks (%v allowed)", p.id, wait.Round(time.Microsecond), r.wait, len(r.probes), waitLimit(r.wait))
		}
	}
}

// ownDelay is delay, the polls of others since p became ready, without
// those that began after worker cur, now polling p, last ended a poll:
// cur took p after that.
func (r *caseRun) ownDelay(p *probe, delay int64, cur int) int64 {
	if r.workers > 1 && cur >= 0 && cur < len(r.workerEndAt) {
		delay = min(delay, r.workerEndAt[cur].Load()-p.readyAt)
	}
	return delay
}

// waitedDefault reports whether p, ready for wait by the clock, has waited
// past the default bound's time: by the clock and by the process's CPU
// time both (where it is measured). A process starved of CPU (a loaded
// machine: a busy-polling executor with 10 ms slices once made 1,736 polls
// in 1.2 s) sees its slices stretch by the clock, not by its own CPU time;
// a starving executor busy with other tasks burns CPU all along. Called
// with p.mu held.
func (r *caseRun) waitedDefault(p *probe, wait time.Duration) bool {
	if wait <= defaultStarveTime {
		return false
	}
	if c := cpuTime(); c > 0 && c-p.readyCPU <= defaultStarveTime {
		return false
	}
	return true
}

// defaultBound says the default bound, for a message.
func (r *caseRun) defaultBound() string {
	if r.sched != nil {
		return fmt.Sprintf("the default bound, %d polls of other tasks (controlled: no clock; executor.Bounded states a bound, executor.FairnessPromiser that none is promised)", r.budget)
	}
	return fmt.Sprintf("the default bound, %d polls of other tasks and %v (executor.Bounded or executor.BoundedWait states a bound, executor.FairnessPromiser that none is promised)", r.budget, defaultStarveTime)
}

// checkStarving looks, at a poll of an endless task, for ready tasks that
// have waited past the limit and are still not polled. Unless the executor
// promises no fairness that is a failure; if it does, a note for the
// report, and the case stops without a verdict.
func (r *caseRun) checkStarving() {
	now := r.pollCount.Load()
	var starved []string
	for _, q := range r.probes {
		q.mu.Lock()
		if q.readyAt >= 0 && r.allWorkersPolledSince(q, -1) {
			waited := time.Since(q.readySince)
			switch {
			case r.mode == fairTime:
				if r.sched == nil && waited > waitLimit(r.wait) {
					starved = append(starved, fmt.Sprintf("task %d (ready for %v, polled %d times)", q.id, waited.Round(time.Millisecond), len(q.polls)))
				}
			case r.mode == fairDefault:
				switch {
				case r.sched != nil && now-q.readyAt > r.budget:
					starved = append(starved, fmt.Sprintf("task %d (ready since poll %d, polled %d times)", q.id, q.readyAt, len(q.polls)))
				case r.sched == nil && now-q.readyAt > r.budget && r.waitedDefault(q, waited):
					starved = append(starved, fmt.Sprintf("task %d (ready for %v, since poll %d, polled %d times)", q.id, waited.Round(time.Millisecond), q.readyAt, len(q.polls)))
				}
			case now-q.readyAt > r.budget && (r.sched != nil || waited > starveTime):
				starved = append(starved, fmt.Sprintf("task %d (ready since poll %d, polled %d times)", q.id, q.readyAt, len(q.polls)))
			}
		}
		q.mu.Unlock()
	}
	if len(starved) == 0 {
		return
	}
	switch r.mode {
	case fairPolls:
		r.violate(checkFairness, "at poll %d, %s: more than %d polls of other tasks while it was ready", now, strings.Join(starved, ", "), r.budget)
	case fairTime:
		r.violate(checkFairness, "at poll %d, %s: more than %v while it was ready", now, strings.Join(starved, ", "), waitLimit(r.wait))
	case fairDefault:
		r.violate(checkFairness, "at poll %d, %s: not polled within %s", now, strings.Join(starved, ", "), r.defaultBound())
	default:
		r.mu.Lock()
		r.starved = fmt.Sprintf("at poll %d, %s: more than %d polls of other tasks while it was ready (the executor promises no fairness)", now, strings.Join(starved, ", "), r.budget)
		r.mu.Unlock()
		r.outOfBudget.Store(true)
	}
	r.stop.Store(true)
}

// starveLimit is how many polls of other tasks a ready endless task may
// wait before the fairness check calls it starved, when the executor states
// no bound of its own: far above any fair policy's delay for the few tasks
// of a fairness case (a global-queue check every 61 polls included), and
// reached in well under a millisecond by an unfair one. Black-box, the
// default bound also needs defaultStarveTime.
const starveLimit = 1000

// defaultStarveTime is how long by the clock a ready task must also have
// waited before the default bound calls it starved (black-box cases): see
// the table at the top of this file for why.
const defaultStarveTime = time.Second

// starveLimitControlled is starveLimit for controlled cases.
const starveLimitControlled = 300

// allWorkersPolledSince reports whether every worker seen so far has ended
// polls since p became ready: for a task still waiting (cur -1), and
// under a controller, a fair share of the starvation limit each (a quarter
// of it, split between the workers); for a task being polled on the Go
// scheduler one each (its poller's own polls are discounted: ownDelay).
// One each was too few for a task still waiting: a worker that ended one
// poll, took p and was descheduled for 34 ms while the other polled a
// thousand tasks made a fair executor (wakeable, 2 workers, black-box)
// fail once in 10,000 cases on a loaded machine. A ready task
// passed over while some worker polled little or nothing may be held by
// that worker, descheduled (by the operating system, or by a schedule such
// as PCT's that runs a goroutine only when nothing else can) between its
// take and its poll; only when every worker kept polling others is it
// starved. Polls count when they end: a worker inside a long poll of
// another task (descheduled there, or the future is slow) holds its local
// queue without the executor's fault, and the poll of p itself, which has
// not ended, does not count. cur is the worker polling p (-1 if none).
// Called with p.mu held.
func (r *caseRun) allWorkersPolledSince(p *probe, cur int) bool {
	seen := r.workerSeen.Load()
	workers := int64(bits.OnesCount64(seen))
	if r.workers > 0 && workers < int64(min(r.workers, 64)) {
		// A worker not seen yet may hold p: taken as its very first task,
		// then descheduled (a goroutine's first run on a loaded machine).
		return false
	}
	need := int64(1)
	if workers > 0 && (r.sched != nil || cur < 0) {
		need = max(1, r.budget/(4*workers))
	}
	for w := range r.workerLast {
		if seen&(1<<w) == 0 {
			continue
		}
		if w < len(r.workerPolls) {
			if r.workerPolls[w].Load()-p.readyShares[w] < need {
				return false
			}
		} else if r.workerLast[w].Load() <= p.readyAt || w == cur {
			return false
		}
	}
	return true
}

// starveTime is how long a ready task must also have waited, by the clock,
// before a poll count counts against the executor (black-box cases only): a
// small margin on top of the rule that every worker must have polled other
// tasks meanwhile (allWorkersPolledSince), which is what tells a starved
// task from one held by a worker the operating system descheduled between
// its take and its poll.
const starveTime = 10 * time.Millisecond
