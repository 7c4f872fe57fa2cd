package properties

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/internal/fair"
)

// wakeKind classifies a wake of a generated task by where it came from.
type wakeKind uint8

const (
	wakeDuring  wakeKind = iota // from inside the task's own poll
	wakeOutside                 // from a goroutine of the workload, outside any poll
	wakePoke                    // from another task's poll
	wakeRing                    // from the predecessor in a ring of endless tasks
)

var wakeKindNames = [...]string{"during its poll", "from another goroutine", "from another task", "from its ring"}

func (k wakeKind) String() string { return wakeKindNames[k] }

// wakeRec is one wake of a task: the logical times of the call to Wake and
// of its return (0 while it has not returned). The wake took effect
// somewhere in between.
type wakeRec struct {
	seq   uint64
	ret   uint64
	kind  wakeKind
	clone bool
}

// returned is the return time of w, or the largest time if it has not
// returned.
func (w wakeRec) returned() uint64 {
	if w.ret == 0 {
		return ^uint64(0)
	}
	return w.ret
}

func (w wakeRec) String() string {
	s := fmt.Sprintf("wake @%d-%d %s", w.seq, w.ret, w.kind)
	if w.clone {
		s += " through a clone"
	}
	return s
}

type pollRec struct {
	begin, end uint64
	worker     int
}

// probe is the future of one generated task. It observes every poll and
// every wake of its task, so an executor that reports nothing can be checked.
// Its bookkeeping is guarded by mu because a broken executor may poll it from
// two goroutines at once; the violation is recorded, not suffered.
type probe struct {
	r       *caseRun
	id      int // from 1
	spec    *TaskSpec
	endless int // index in Workload.Endless, or -1
	outside bool

	spawned atomic.Bool
	inPoll  atomic.Int32

	mu          sync.Mutex
	next        int // next step
	finished    bool
	completions int
	polls       []pollRec
	wakes       []wakeRec
	waker       executor.Waker // latest, for pokes and ring wakes
	hasWaker    bool
	ready       fair.Ready // when the task last became ready (At: caseRun.pollCount then, -1 if it is not)
	readyAtEnd  bool       // woken during the current poll: ready when it returns
	handle      executor.Handle
	spawnErr    error
	dropped     int // polls and wakes past maxRecords, see appendCapped
	finishedAt  int // the poll (from 1) at which the task finished
	repolls     int // polls after it finished
}

// maxRecords bounds the polls and the wakes one task keeps a record of in
// one case, so that an executor that polls in a loop (spuriously, or
// without end) cannot grow the case's memory: about 400 KB per task.
const maxRecords = 1 << 14

// appendCapped appends x to xs, unless xs holds maxRecords already: then x
// replaces the last record (the latest poll or wake is what the checks of a
// hang look at) and *dropped counts the one it replaced.
func appendCapped[T any](xs []T, x T, dropped *int) []T {
	if len(xs) < maxRecords {
		return append(xs, x)
	}
	xs[len(xs)-1] = x
	*dropped++
	return xs
}

type taskPanic struct{ task int }

func (p taskPanic) String() string { return fmt.Sprintf("generated panic of task %d", p.task) }

// taskError is the error of a generated task that finishes with
// executor.Failed.
type taskError struct{ task int }

func (e *taskError) Error() string { return fmt.Sprintf("generated error of task %d", e.task) }

// noteWake records a wake of p before it is made, so that any poll it causes
// has a later sequence number.
func (p *probe) noteWake(kind wakeKind, clone bool) (seq uint64, i int) {
	seq = p.r.tick()
	p.mu.Lock()
	p.wakes = appendCapped(p.wakes, wakeRec{seq: seq, kind: kind, clone: clone}, &p.dropped)
	i = len(p.wakes) - 1
	p.mu.Unlock()
	return seq, i
}

// wake records a wake of p, makes it through w, and then marks p ready.
func (p *probe) wake(w executor.Waker, kind wakeKind, clone bool) {
	seq, i := p.noteWake(kind, clone)
	w.Wake()
	ret := p.r.tick()
	p.mu.Lock()
	p.wakes[i].ret = ret
	p.mu.Unlock()
	p.markReady(seq)
}

// markReady notes that p is ready since now, after a wake or spawn that
// began at seq, unless p was polled since then (the wake was served) or is
// ready already. Readiness counts from the moment the executor accepted the
// wake, not from when the waker was called, so a waking goroutine that is
// descheduled mid-call is not blamed on the executor.
func (p *probe) markReady(seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished || p.ready.At >= 0 {
		return
	}
	n := len(p.polls)
	if n > 0 && p.polls[n-1].begin > seq {
		return
	}
	if n > 0 && p.polls[n-1].end == 0 {
		// Woken during its own poll (NOTIFIED): it is ready again only
		// once the poll has returned.
		p.readyAtEnd = true
		return
	}
	p.setReady()
}

// requeued notes that worker w, which polled p last and saw it woken
// during that poll, has begun another poll: it has re-queued p by now
// (TASK-SUSPEND happens before the worker's next poll). p counts as ready
// from here, not from the end of its poll: a worker descheduled between a
// poll's return and the re-queue holds p, which is no delay of the
// executor's order (it made wakeable, 2 workers, black-box, fail its
// bound of 2 polls with 460, once in 10,000 cases on a loaded machine).
func (p *probe) requeued(w int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.polls)
	if p.ready.At < 0 || n == 0 || p.polls[n-1].worker != w || p.polls[n-1].end == 0 {
		return
	}
	p.setReady()
}

// setReady marks p ready now. Called with p.mu held.
func (p *probe) setReady() { p.r.fair.Mark(&p.ready, p.r.pollCount.Load()) }

// setFairness reads what ex states for n endless tasks, and what cfg sets.
func (r *caseRun) setFairness(ex executor.Executor, n int, cfg *Config) {
	r.fair.Set(ex, n, cfg.FairnessBound, cfg.FairnessWait)
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
		if s := r.fair.Starved(q.id, len(q.polls), &q.ready, now); s != "" {
			starved = append(starved, s)
		}
		q.mu.Unlock()
	}
	if len(starved) == 0 {
		return
	}
	if detail, violated := r.fair.Starving(now, starved); violated {
		r.violate(checkFairness, "%s", detail)
	} else {
		r.mu.Lock()
		r.starved = detail
		r.mu.Unlock()
		r.outOfBudget.Store(true)
	}
	r.stop.Store(true)
}

// Poll runs the next step of the task's program.
func (p *probe) Poll(cx *executor.Context) (any, bool) {
	r := p.r
	if r.over.Load() {
		r.cutOff()
	}
	begin := r.tick()
	if w := cx.Worker(); w >= 0 && w < len(r.requeuing) {
		if q := r.requeuing[w].Swap(nil); q != nil && q != p {
			q.requeued(w)
		}
	}
	if !p.inPoll.CompareAndSwap(0, 1) {
		r.violate(checkConcurrentPoll, "task %d: a poll began on worker %d while another poll of it was running", p.id, cx.Worker())
		return nil, false
	}
	p.mu.Lock()
	if p.finished {
		p.repolls++
		n := len(p.polls) + p.repolls
		how := p.finishedHow()
		p.mu.Unlock()
		p.inPoll.Store(0)
		if n > p.finishedAt+1 {
			// Counted (TaskObservation.Repolls), not reported again.
			return nil, false
		}
		r.violate(checkPollAfterReady, "task %d %s at poll %d; poll %d, on worker %d, came after that. A future that finished is never polled again (TASK-COMPLETE)%s", p.id, how, p.finishedAt, n, cx.Worker(), p.retryHint())
		return nil, false
	}
	p.polls = appendCapped(p.polls, pollRec{begin: begin, worker: cx.Worker()}, &p.dropped)
	p.waker, p.hasWaker = cx.Waker(), true
	n := r.pollCount.Add(1)
	r.fair.Saw(cx.Worker())
	if p.ready.At >= 0 {
		if d := r.fair.Polled(p.id, len(r.probes), &p.ready, n); d != "" {
			r.violate(checkFairness, "%s", d)
		}
		p.ready.At = -1
	}
	k := p.next
	p.next++
	p.mu.Unlock()

	if p.endless >= 0 {
		return p.pollEndless(cx, k)
	}
	if k < len(p.spec.Steps) {
		st := &p.spec.Steps[k]
		for i := range st.Spawn {
			r.spawnChild(p, k, i)
		}
		if st.Poke > 0 && len(r.probes) > 1 {
			if q := r.probes[(st.Poke-1)%len(r.probes)]; q != p {
				q.poke(wakePoke)
			}
		}
		w := cx.Waker()
		if st.Clone {
			w = w.Clone()
		}
		switch st.Wake {
		case WakeSelf:
			for range st.Wakes {
				p.wake(w, wakeDuring, st.Clone)
			}
		case WakeAsync:
			r.goWake(p, w, st)
		}
		p.endPoll()
		if st.Wake == WakeAfter {
			r.goWake(p, w, st)
		}
		return nil, false
	}
	p.finish()
	if p.spec.Panic {
		panic(taskPanic{p.id})
	}
	if p.spec.Fail {
		return executor.Failed{Err: &taskError{p.id}}, true
	}
	return p.id, true
}

// finishedHow says how the task's future finished, in the API's terms.
func (p *probe) finishedHow() string {
	switch {
	case p.endless >= 0:
		return fmt.Sprintf("returned Ready (value %d)", p.id)
	case p.spec.Panic:
		return "panicked"
	case p.spec.Fail:
		return "finished with an error (Ready with an executor.Failed)"
	}
	return fmt.Sprintf("returned Ready (value %d)", p.id)
}

// retryHint is what to do instead, for a failed task polled again: the
// usual cause is a retry that re-polls the failed future.
func (p *probe) retryHint() string {
	if p.endless < 0 && (p.spec.Panic || p.spec.Fail) {
		return "; if it was retried, a retry must poll a fresh future: a future that can be retried implements executor.Retryable, whose Fresh makes one (executor.Retry runs it so)"
	}
	return ""
}

func (p *probe) finish() {
	p.mu.Lock()
	p.finished = true
	p.finishedAt = len(p.polls)
	p.completions++
	p.mu.Unlock()
	p.endPoll()
	p.r.finishedCount.Add(1)
}

func (p *probe) endPoll() {
	end := p.r.tick()
	p.mu.Lock()
	last := &p.polls[len(p.polls)-1]
	last.end = end
	p.r.fair.Ended(last.worker)
	if p.readyAtEnd && !p.finished {
		p.setReady()
		if w := last.worker; w >= 0 && w < len(p.r.requeuing) {
			p.r.requeuing[w].Store(p)
		}
	}
	p.readyAtEnd = false
	p.mu.Unlock()
	p.inPoll.Store(0)
}

// poke wakes p with its latest waker, if it has been polled.
func (p *probe) poke(kind wakeKind) {
	p.mu.Lock()
	w, ok := p.waker, p.hasWaker
	p.mu.Unlock()
	if ok {
		p.wake(w, kind, false)
	}
}

// pollEndless is one poll of an endless task of a fairness workload.
func (p *probe) pollEndless(cx *executor.Context, k int) (any, bool) {
	r := p.r
	e := r.w.Endless[p.endless]
	if k+1 == r.minPolls && r.reached.Add(1) == int64(len(r.probes)) {
		r.stop.Store(true)
	}
	if r.sched != nil && !r.stop.Load() && r.pollCount.Load() > 20*r.fair.Budget {
		// Under control a schedule may starve a worker (PCT runs the
		// lowest-priority goroutine only when nothing else can run), so a
		// task it holds is never polled while the others go on. That is
		// the schedule's doing, not the executor's: stop without a verdict.
		r.outOfBudget.Store(true)
		r.stop.Store(true)
	}
	if !r.stop.Load() {
		r.checkStarving()
	}
	stop := r.stop.Load()
	switch {
	case e.Next == p.endless:
		if !stop {
			p.wake(cx.Waker(), wakeDuring, false)
		}
	case e.Next >= 0:
		// Wake the successor even when stopping: it may be waiting for
		// this very wake, and it has to see the stop too.
		r.probes[len(r.probes)-len(r.w.Endless)+e.Next].poke(wakeRing)
	}
	if stop {
		p.finish()
		return p.id, true
	}
	w := cx.Waker()
	p.endPoll()
	if e.Next < 0 {
		r.goWake(p, w, &Step{Wakes: 1})
	}
	return nil, false
}

// goWake wakes p from a new goroutine, as step st says.
func (r *caseRun) goWake(p *probe, w executor.Waker, st *Step) {
	r.pending.Add(1)
	r.gofn(func() {
		defer r.pending.Add(-1)
		for range st.Yields {
			r.yield()
		}
		for range st.Wakes {
			p.wake(w, wakeOutside, st.Clone)
		}
	})
}

// gofn starts fn on a new goroutine: a controlled one under a Controller.
func (r *caseRun) gofn(fn func()) {
	if r.sched != nil {
		r.sched.Go(fn)
		return
	}
	go fn()
}

// yield lets other goroutines run: a yield point under a Controller.
func (r *caseRun) yield() {
	if r.sched != nil {
		r.sched.Yield(executor.PointWake)
		return
	}
	runtime.Gosched()
}
