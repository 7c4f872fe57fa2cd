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
//	polls b      every worker ended more than b + 2W polls of other tasks between its becoming ready and its poll (W workers: takes before it was ready are not seen from outside; black-box with W > 1, also more than starveTime, 10 ms), or more than max(b+2W, starveLimit) each while it is still waiting; black-box, also when the workers' polls summed pass those limits over more than defaultStarveTime by the clock and the CPU time (starvedLong)
//	time d       it waited longer than waitLimit(d) = 3d + 500 ms by the clock, less the time the process was kept from running (ranFor), while every worker ended polls of other tasks (black-box cases only: under a controller time means nothing)
//	nothing      the default bound: more than starveLimit (1,000) polls of other tasks while it was ready, and it waited more than defaultStarveTime (1 s), by the clock and by the process's CPU time (waitedDefault); under a controller more than starveLimitControlled (300) polls by every worker, and no clock
//	no fairness  never: the figures (the most polls of others between ready and poll, the longest wait, a task seemingly starved) are reported as information
//
// Polls are counted per worker (heldPolls): a wait counts against the
// executor only as far as the least busy worker of the executor went on
// polling other tasks. A ready task can be held by one worker: in its local
// queue (a work stealer steals only when its own queue is empty), between
// its take and its poll, or between the end of its poll and its re-queue
// (a wake that came then made it NOTIFIED). The operating system, or a
// schedule such as PCT's, can stop that worker for as long as it likes
// while the others poll their own tasks, which is no fault of the
// executor's order. From outside no one can tell which worker holds the
// task; the least busy one polled no more than the holder did, so its count
// never exceeds what a fair executor's holder would do, and a starving
// executor keeps every worker polling others. The price of not knowing
// the holder: an executor that passes a task over is caught once every
// worker has polled past the bound, not their sum — except that a wait
// of more than five seconds of the process's CPU time (starvedLong)
// counts the polls summed: neither the operating system nor Go's
// scheduler keeps a worker that can run off a core that long, and a
// starving executor whose other worker never polls (parked, or never
// started) would otherwise pass as a black box. Summing the workers'
// polls instead gave false alarms on fair executors run on real threads:
// a work stealer whose second worker polled its own tasks while the
// first, descheduled, held the ready task in its local queue (328 polls of
// others against a bound of 300), and a shared FIFO (wakeable, 2 workers,
// bound n-1) whose worker was descheduled between the end of a poll and
// the re-queue of the task woken just then, while the other polled 4,097
// others.
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
func (r *caseRun) polledReady(p *probe, n int64) {
	delay := n - 1 - p.readyAt
	if delay > r.maxDelay.Load() {
		r.maxDelay.Store(delay)
	}
	held, workers := r.heldPolls(p, delay)
	if held > r.maxHeld.Load() {
		r.maxHeld.Store(held)
	}
	wait := time.Since(p.readySince)
	if int64(wait) > r.maxWait.Load() {
		r.maxWait.Store(int64(wait))
	}
	switch r.mode {
	case fairPolls:
		slack := r.slack()
		if held > int64(r.bound)+slack && (workers == 1 || r.sched != nil || wait > starveTime) || r.starvedLong(p, delay, int64(r.bound)+slack, wait) {
			r.violate(checkFairness, "task %d waited %d polls of other tasks between becoming ready and its poll%s; the executor states a bound of %d for %d tasks (%d allowed for polls begun after takes that came before it was ready)", p.id, delay, eachWorker(held, workers), r.bound, len(r.probes), slack)
		}
	case fairDefault:
		if held > r.budget && (r.sched != nil || r.waitedDefault(p, wait)) || r.starvedLong(p, delay, r.budget, wait) {
			r.violate(checkFairness, "task %d waited %d polls of other tasks (%v) between becoming ready and its poll%s; the executor states no bound, and the default is %s", p.id, delay, wait.Round(time.Millisecond), eachWorker(held, workers), r.defaultBound())
		}
	case fairTime:
		if r.sched == nil && r.ranFor(p, wait) > waitLimit(r.wait) && held > 0 {
			r.violate(checkFairness, "task %d waited %v between becoming ready and its poll; the executor states a bound of %v for %d tasks (%v allowed)", p.id, wait.Round(time.Microsecond), r.wait, len(r.probes), waitLimit(r.wait))
		}
	}
}

// eachWorker says, for a message, how many polls of others the least busy
// of several workers ended: what the bound was checked against.
func eachWorker(held int64, workers int) string {
	if workers <= 1 {
		return ""
	}
	return fmt.Sprintf(", and each of the %d workers ended at least %d of them meanwhile", workers, held)
}

// heldPolls is the wait of p, ready for delay polls of other tasks (begun
// by any worker), as the check counts it: the polls of other tasks that
// the least busy worker of the executor ended since p became ready (the
// table at the top of this file says why), and how many workers were
// counted. Each worker counts on its own: the executor's W workers (from
// its Describe) or, if it does not say, those seen so far; a worker not
// seen yet counts 0 (it may hold p, taken as its very first task, then
// descheduled). Polls count when they end: a worker inside a long poll of
// another task (descheduled there, or the future is slow) holds its local
// queue without the executor's fault, and the poll of p itself, which has
// not ended, does not count. An executor that names no worker in its
// Context (Worker() < 0) is one worker: all of delay counts. Workers
// numbered 64 and above are not counted apart. Called with p.mu held.
func (r *caseRun) heldPolls(p *probe, delay int64) (held int64, workers int) {
	seen := r.workerSeen.Load()
	if seen == 0 {
		return delay, 1
	}
	workers = max(bits.OnesCount64(seen), min(r.workers, len(r.workerPolls)))
	if bits.OnesCount64(seen) < workers {
		return 0, workers
	}
	held = delay
	for s := seen; s != 0; s &= s - 1 {
		w := bits.TrailingZeros64(s)
		held = min(held, r.workerPolls[w].Load()-p.readyShares[w])
	}
	return max(held, 0), workers
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

// starvedLong reports whether p, ready for delay polls of other tasks
// summed over the workers and for wait by the clock, is starved however
// its polls are spread over the workers: in a black-box case, more than
// limit polls summed and more than longStarveTime by the clock and by
// the process's CPU time. The least busy worker's count (heldPolls)
// spares a task held by a worker the operating system stopped, but it
// also spares a starving executor whose other worker polls nothing (it
// never started, or it parked while the task waits): a worker stopped by
// the operating system is not kept off a core for seconds of the
// process's CPU time, so a wait that long is the executor's. Under a
// controller a schedule may stop a worker for as long as it likes (and
// there is no clock): never. Called with p.mu held.
func (r *caseRun) starvedLong(p *probe, delay, limit int64, wait time.Duration) bool {
	if r.sched != nil || delay <= limit || wait <= longStarveTime {
		return false
	}
	c := cpuTime()
	return c <= 0 || c-p.readyCPU > longStarveTime
}

// longStarveTime is how long by the clock and by the process's CPU time a
// ready task must have waited before the polls of all workers summed
// count against the executor (starvedLong): many times the longest a
// goroutine that can run waits for a core on a loaded machine (the Go
// scheduler preempts every 10 ms; the operating system's slices are of
// milliseconds), so a stop of the worker holding the task, which the least
// busy worker's count spares, is not mistaken for starvation.
const longStarveTime = 5 * time.Second

// ranFor is p's wait by the clock less the time the watcher of the case
// found the process kept from running meanwhile (its ticks late: a loaded
// machine, a stop of the world), which a bound in time does not count: a
// fair executor with 20 ms slices had a task wait 903 ms against 863 ms
// allowed at a load of 14 on 2 cores. An executor that keeps the task
// waiting while it sleeps or polls others does not make the watcher late.
// Called with p.mu held.
func (r *caseRun) ranFor(p *probe, wait time.Duration) time.Duration {
	return wait - time.Duration(r.late.Load()-p.readyLate)
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
		if q.readyAt >= 0 {
			waited := time.Since(q.readySince)
			held, workers := r.heldPolls(q, now-q.readyAt)
			if r.mode != fairTime && r.starvedLong(q, now-q.readyAt, r.budget, waited) {
				held = r.budget + 1 // starved, the polls summed (starvedLong)
			}
			switch {
			case r.mode == fairTime:
				// A wait in time needs every worker to have ended a fair
				// share of the limit meanwhile: a worker that ended a few
				// polls and was then descheduled holding the task is
				// not the executor's order.
				if r.sched == nil && r.ranFor(q, waited) > waitLimit(r.wait) && held >= max(1, r.budget/(4*int64(workers))) {
					starved = append(starved, fmt.Sprintf("task %d (ready for %v, polled %d times)", q.id, waited.Round(time.Millisecond), len(q.polls)))
				}
			case held <= r.budget:
			case r.mode == fairDefault:
				switch {
				case r.sched != nil:
					starved = append(starved, fmt.Sprintf("task %d (ready since poll %d, polled %d times)", q.id, q.readyAt, len(q.polls)))
				case r.waitedDefault(q, waited):
					starved = append(starved, fmt.Sprintf("task %d (ready for %v, since poll %d, polled %d times)", q.id, waited.Round(time.Millisecond), q.readyAt, len(q.polls)))
				}
			case r.sched != nil || waited > starveTime:
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
		r.violate(checkFairness, "at poll %d, %s: more than %d polls of other tasks by every worker while it was ready", now, strings.Join(starved, ", "), r.budget)
	case fairTime:
		r.violate(checkFairness, "at poll %d, %s: more than %v while it was ready", now, strings.Join(starved, ", "), waitLimit(r.wait))
	case fairDefault:
		r.violate(checkFairness, "at poll %d, %s: not polled within %s", now, strings.Join(starved, ", "), r.defaultBound())
	default:
		r.mu.Lock()
		r.starved = fmt.Sprintf("at poll %d, %s: more than %d polls of other tasks by every worker while it was ready (the executor promises no fairness)", now, strings.Join(starved, ", "), r.budget)
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

// starveTime is how long a ready task must also have waited, by the clock,
// before a poll count counts against the executor (black-box cases with
// more than one worker only): a small margin on top of counting the polls
// of each worker apart (heldPolls), which is what tells a starved task from
// one held by a worker the operating system descheduled.
const starveTime = 10 * time.Millisecond
