package fair

import (
	"fmt"
	"math/bits"
	"strings"
	"sync/atomic"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/internal/cputime"
)

// Fairness that fits the executor. An executor states its bound in polls
// (executor.Bounded), in time (executor.BoundedWait), that it promises no
// fairness at all (executor.FairnessPromiser false), or nothing; the user
// may set a bound for it (Config.FairnessBound, Config.FairnessWait, the
// FairnessBound and FairnessWait options), which the executor's own bound
// overrides. The check holds it to what is stated:
//
//	stated       a ready task fails the check when
//	polls b      every worker ended more than b + 2W polls of other tasks between its becoming ready and its poll (W workers: takes before it was ready are not seen from outside; black-box with W > 1, also more than starveTime, 10 ms), or more than max(b+2W, StarveLimit) each while it is still waiting; black-box, also when the workers' polls summed pass those limits over more than DefaultStarveTime by the clock and the CPU time (starvedLong)
//	time d       it waited longer than waitLimit(d) = 3d + 500 ms by the clock, less the time the process was kept from running (ranFor), while every worker ended polls of other tasks (black-box cases only: under a controller time means nothing)
//	nothing      the default bound: more than StarveLimit (1,000) polls of other tasks while it was ready, and it waited more than DefaultStarveTime (1 s), by the clock and by the process's CPU time (waitedDefault); under a controller more than starveLimitControlled (300) polls by every worker, and no clock
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

// Mode is what a case's fairness is held to.
type Mode uint8

const (
	Unchecked Mode = iota // not a fairness case
	Default               // nothing stated: the default bound
	Polls                 // a bound in polls of other tasks
	Time                  // a bound in time
	Off                   // the executor promises no fairness: figures only
)

func (m Mode) String() string {
	return [...]string{"", "default", "polls", "time", "none promised"}[m]
}

// Meter is the fairness measure of one case: what the executor is held
// to, and the polls each worker ended. The case runner sets Controlled
// (a controlled case: no clock, no operating system) before Set, tells
// it of every poll (Saw as it begins, Ended as it returns, Polled for a
// task that was ready) and of every task that becomes ready (Mark). The
// counters are atomic: workers poll concurrently; a task's Ready is
// guarded by its own lock.
type Meter struct {
	Mode       Mode
	Bound      int           // stated fairness bound in polls, -1 if none
	Wait       time.Duration // stated fairness bound in time, 0 if none
	Budget     int64         // polls of other tasks a ready task may wait before it counts as starved
	Workers    int           // from the executor's Describe, 0 if unknown
	Controlled bool          // the case runs under a scheduler (a Controller or the instrumented engine)

	MaxDelay    atomic.Int64     // the most polls of other tasks between a task becoming ready and its poll
	MaxHeld     atomic.Int64     // the most polls of other tasks the least busy worker ended between a task becoming ready and its poll (heldPolls)
	MaxWait     atomic.Int64     // the longest a ready task waited for its poll, in nanoseconds
	Late        atomic.Int64     // black-box: how late the watcher's ticks came in all, in nanoseconds (the process kept from running)
	WorkerSeen  atomic.Uint64    // bit w: worker w has polled
	WorkerPolls [64]atomic.Int64 // polls ended by each worker (numbered below 64)
}

// Ready is when a task last became ready, as the meter took it.
type Ready struct {
	At     int64         // the case's poll count then, -1 if the task is not ready
	Since  time.Time     // by the clock
	CPU    time.Duration // the process's CPU time then (bounds in polls and the default, black-box only)
	Late   int64         // Meter.Late then (a bound in time, black-box only)
	Shares [64]int64     // Meter.WorkerPolls (polls ended by each worker) then
}

// Set reads what ex states for n endless tasks, and the bound in polls
// or in time the user set for an executor that states none.
func (m *Meter) Set(ex executor.Executor, n, bound int, wait time.Duration) {
	m.Mode, m.Budget = Default, StarveLimit
	if m.Controlled {
		// Under control no operating system intervenes: a smaller
		// limit, still far above any fair policy's delay.
		m.Budget = starveLimitControlled
	}
	if f, ok := ex.(executor.FairnessPromiser); ok && !f.PromisesFairness() {
		m.Mode = Off
	}
	if bound > 0 {
		m.Mode, m.Bound = Polls, bound
	}
	if wait > 0 {
		m.Mode, m.Wait = Time, wait
	}
	if b, ok := ex.(executor.Bounded); ok {
		if x := b.FairnessBound(n); x >= 0 {
			m.Mode, m.Bound = Polls, x
		}
	}
	if b, ok := ex.(executor.BoundedWait); ok {
		if d := b.FairnessWait(n); d > 0 {
			m.Mode, m.Wait = Time, d
		}
	}
	if d, ok := ex.(executor.Describer); ok {
		m.Workers = d.Describe().Workers
	}
	if m.Mode == Polls {
		m.Budget = max(m.Budget, int64(m.Bound)+m.slack())
	}
}

// Mark notes that the task of rd is ready now, the polls-th poll of the
// case having begun.
func (m *Meter) Mark(rd *Ready, polls int64) {
	rd.At = polls
	rd.Since = time.Now()
	if (m.Mode == Default || m.Mode == Polls) && !m.Controlled {
		rd.CPU = cputime.Process()
	}
	rd.Late = m.Late.Load()
	// Workers above the highest seen have ended no poll: their share
	// stays 0 from the start.
	for w := range bits.Len64(m.WorkerSeen.Load()) {
		rd.Shares[w] = m.WorkerPolls[w].Load()
	}
}

// Saw notes that worker w began a poll.
func (m *Meter) Saw(w int) {
	if w >= 0 && w < len(m.WorkerPolls) {
		m.WorkerSeen.Or(1 << w)
	}
}

// Ended notes that worker w ended a poll.
func (m *Meter) Ended(w int) {
	if w >= 0 && w < len(m.WorkerPolls) {
		m.WorkerPolls[w].Add(1)
	}
}

// slack is the polls of other tasks a ready task may see begin beyond the
// executor's figure: from outside, a take is not seen, so each worker may
// have taken a task before this one became ready and begun its poll after;
// the same holds for the executor's work after a poll returns, before a
// NOTIFIED task is queued again: twice the workers.
func (m *Meter) slack() int64 { return 2 * int64(max(m.Workers, 1)) }

// waitLimit is how long past its stated wait a ready task may wait before
// it counts as starved: three times the bound and half a second, for the
// clock's and the operating system's share (a time slice that ends while
// its worker is descheduled ends late, so the share grows with the bound). A loaded machine deschedules
// for tens of milliseconds; under the race detector, with a load of 12 on
// 2 cores, a fair executor with 20ms slices kept 5 tasks waiting 454ms.
func waitLimit(d time.Duration) time.Duration { return 3*d + 500*time.Millisecond }

// Polled is the poll (the n-th of the case) of task id, ready since rd,
// in a case of tasks tasks: it measures the delay and the wait and checks
// them against the stated bound. It returns the failure's detail, or "".
// Called with the task's lock held.
func (m *Meter) Polled(id, tasks int, rd *Ready, n int64) string {
	delay := n - 1 - rd.At
	if delay > m.MaxDelay.Load() {
		m.MaxDelay.Store(delay)
	}
	held, workers := m.heldPolls(rd, delay)
	if held > m.MaxHeld.Load() {
		m.MaxHeld.Store(held)
	}
	wait := time.Since(rd.Since)
	if int64(wait) > m.MaxWait.Load() {
		m.MaxWait.Store(int64(wait))
	}
	switch m.Mode {
	case Polls:
		slack := m.slack()
		if held > int64(m.Bound)+slack && (workers == 1 || m.Controlled || wait > starveTime) || m.starvedLong(rd, delay, int64(m.Bound)+slack, wait) {
			return fmt.Sprintf("task %d waited %d polls of other tasks between becoming ready and its poll%s; the executor states a bound of %d for %d tasks (%d allowed for polls begun after takes that came before it was ready)", id, delay, eachWorker(held, workers), m.Bound, tasks, slack)
		}
	case Default:
		if held > m.Budget && (m.Controlled || m.waitedDefault(rd, wait)) || m.starvedLong(rd, delay, m.Budget, wait) {
			return fmt.Sprintf("task %d waited %d polls of other tasks (%v) between becoming ready and its poll%s; the executor states no bound, and the default is %s", id, delay, wait.Round(time.Millisecond), eachWorker(held, workers), m.defaultBound())
		}
	case Time:
		if !m.Controlled && m.ranFor(rd, wait) > waitLimit(m.Wait) && held > 0 {
			return fmt.Sprintf("task %d waited %v between becoming ready and its poll; the executor states a bound of %v for %d tasks (%v allowed)", id, wait.Round(time.Microsecond), m.Wait, tasks, waitLimit(m.Wait))
		}
	}
	return ""
}

// eachWorker says, for a message, how many polls of others the least busy
// of several workers ended: what the bound was checked against.
func eachWorker(held int64, workers int) string {
	if workers <= 1 {
		return ""
	}
	return fmt.Sprintf(", and each of the %d workers ended at least %d of them meanwhile", workers, held)
}

// heldPolls is the wait of a task ready since rd, for delay polls of other tasks (begun
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
// numbered 64 and above are not counted apart. Called with the task's lock held.
func (m *Meter) heldPolls(rd *Ready, delay int64) (held int64, workers int) {
	seen := m.WorkerSeen.Load()
	if seen == 0 {
		return delay, 1
	}
	workers = max(bits.OnesCount64(seen), min(m.Workers, len(m.WorkerPolls)))
	if bits.OnesCount64(seen) < workers {
		return 0, workers
	}
	held = delay
	for s := seen; s != 0; s &= s - 1 {
		w := bits.TrailingZeros64(s)
		held = min(held, m.WorkerPolls[w].Load()-rd.Shares[w])
	}
	return max(held, 0), workers
}

// waitedDefault reports whether a task ready since rd, for wait by the clock, has waited
// past the default bound's time: by the clock and by the process's CPU
// time both (where it is measured). A process starved of CPU (a loaded
// machine: a busy-polling executor with 10 ms slices once made 1,736 polls
// in 1.2 s) sees its slices stretch by the clock, not by its own CPU time;
// a starving executor busy with other tasks burns CPU all along. Called
// with the task's lock held.
func (m *Meter) waitedDefault(rd *Ready, wait time.Duration) bool {
	if wait <= DefaultStarveTime {
		return false
	}
	if c := cputime.Process(); c > 0 && c-rd.CPU <= DefaultStarveTime {
		return false
	}
	return true
}

// starvedLong reports whether a task ready since rd, for delay polls of other tasks
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
// there is no clock): never. Called with the task's lock held.
func (m *Meter) starvedLong(rd *Ready, delay, limit int64, wait time.Duration) bool {
	if m.Controlled || delay <= limit || wait <= longStarveTime {
		return false
	}
	c := cputime.Process()
	return c <= 0 || c-rd.CPU > longStarveTime
}

// longStarveTime is how long by the clock and by the process's CPU time a
// ready task must have waited before the polls of all workers summed
// count against the executor (starvedLong): many times the longest a
// goroutine that can run waits for a core on a loaded machine (the Go
// scheduler preempts every 10 ms; the operating system's slices are of
// milliseconds), so a stop of the worker holding the task, which the least
// busy worker's count spares, is not mistaken for starvation.
const longStarveTime = 5 * time.Second

// ranFor is a task's wait by the clock less the time the watcher of the case
// found the process kept from running meanwhile (its ticks late: a loaded
// machine, a stop of the world), which a bound in time does not count: a
// fair executor with 20 ms slices had a task wait 903 ms against 863 ms
// allowed at a load of 14 on 2 cores. An executor that keeps the task
// waiting while it sleeps or polls others does not make the watcher late.
// Called with the task's lock held.
func (m *Meter) ranFor(rd *Ready, wait time.Duration) time.Duration {
	return wait - time.Duration(m.Late.Load()-rd.Late)
}

// defaultBound says the default bound, for a message.
func (m *Meter) defaultBound() string {
	if m.Controlled {
		return fmt.Sprintf("the default bound, %d polls of other tasks (controlled: no clock; executor.Bounded states a bound, executor.FairnessPromiser that none is promised)", m.Budget)
	}
	return fmt.Sprintf("the default bound, %d polls of other tasks and %v (executor.Bounded or executor.BoundedWait states a bound, executor.FairnessPromiser that none is promised)", m.Budget, DefaultStarveTime)
}

// Starved reports, at the now-th poll of the case (a poll of an endless
// task), whether task id, ready since rd and polled polls times, has
// waited past the limit and is still not polled: a description of it, or
// "". Called with the task's lock held.
func (m *Meter) Starved(id, polls int, rd *Ready, now int64) string {
	if rd.At < 0 {
		return ""
	}
	waited := time.Since(rd.Since)
	held, workers := m.heldPolls(rd, now-rd.At)
	if m.Mode != Time && m.starvedLong(rd, now-rd.At, m.Budget, waited) {
		held = m.Budget + 1 // starved, the polls summed (starvedLong)
	}
	switch {
	case m.Mode == Time:
		// A wait in time needs every worker to have ended a fair
		// share of the limit meanwhile: a worker that ended a few
		// polls and was then descheduled holding the task is
		// not the executor's order.
		if !m.Controlled && m.ranFor(rd, waited) > waitLimit(m.Wait) && held >= max(1, m.Budget/(4*int64(workers))) {
			return fmt.Sprintf("task %d (ready for %v, polled %d times)", id, waited.Round(time.Millisecond), polls)
		}
	case held <= m.Budget:
	case m.Mode == Default:
		switch {
		case m.Controlled:
			return fmt.Sprintf("task %d (ready since poll %d, polled %d times)", id, rd.At, polls)
		case m.waitedDefault(rd, waited):
			return fmt.Sprintf("task %d (ready for %v, since poll %d, polled %d times)", id, waited.Round(time.Millisecond), rd.At, polls)
		}
	case m.Controlled || waited > starveTime:
		return fmt.Sprintf("task %d (ready since poll %d, polled %d times)", id, rd.At, polls)
	}
	return ""
}

// Starving says what the starved tasks at the now-th poll (each as
// Starved describes it) mean: a failure of the stated bound (violated),
// or, when the executor promises no fairness, a note for the report; the
// case stops either way.
func (m *Meter) Starving(now int64, starved []string) (detail string, violated bool) {
	switch m.Mode {
	case Polls:
		return fmt.Sprintf("at poll %d, %s: more than %d polls of other tasks by every worker while it was ready", now, strings.Join(starved, ", "), m.Budget), true
	case Time:
		return fmt.Sprintf("at poll %d, %s: more than %v while it was ready", now, strings.Join(starved, ", "), waitLimit(m.Wait)), true
	case Default:
		return fmt.Sprintf("at poll %d, %s: not polled within %s", now, strings.Join(starved, ", "), m.defaultBound()), true
	}
	return fmt.Sprintf("at poll %d, %s: more than %d polls of other tasks by every worker while it was ready (the executor promises no fairness)", now, strings.Join(starved, ", "), m.Budget), false
}

// StarveLimit is how many polls of other tasks a ready endless task may
// wait before the fairness check calls it starved, when the executor states
// no bound of its own: far above any fair policy's delay for the few tasks
// of a fairness case (a global-queue check every 61 polls included), and
// reached in well under a millisecond by an unfair one. Black-box, the
// default bound also needs DefaultStarveTime.
const StarveLimit = 1000

// DefaultStarveTime is how long by the clock a ready task must also have
// waited before the default bound calls it starved (black-box cases): see
// the table at the top of this file for why.
const DefaultStarveTime = time.Second

// starveLimitControlled is StarveLimit for controlled cases.
const starveLimitControlled = 300

// starveTime is how long a ready task must also have waited, by the clock,
// before a poll count counts against the executor (black-box cases with
// more than one worker only): a small margin on top of counting the polls
// of each worker apart (heldPolls), which is what tells a starved task from
// one held by a worker the operating system descheduled.
const starveTime = 10 * time.Millisecond
