package properties

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/traces"
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
	readyAt     int64 // value of caseRun.pollCount when the task last became ready, -1 if it is not
	readySince  time.Time
	readyAtEnd  bool     // woken during the current poll: ready when it returns
	readyShares [8]int64 // caseRun.workerPolls when it became ready
	handle      executor.Handle
	spawnErr    error
}

type taskPanic struct{ task int }

func (p taskPanic) String() string { return fmt.Sprintf("generated panic of task %d", p.task) }

// noteWake records a wake of p before it is made, so that any poll it causes
// has a later sequence number.
func (p *probe) noteWake(kind wakeKind, clone bool) (seq uint64, i int) {
	seq = p.r.tick()
	p.mu.Lock()
	p.wakes = append(p.wakes, wakeRec{seq: seq, kind: kind, clone: clone})
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
	if p.finished || p.readyAt >= 0 {
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

// setReady marks p ready now. Called with p.mu held.
func (p *probe) setReady() {
	r := p.r
	p.readyAt = r.pollCount.Load()
	p.readySince = time.Now()
	for w := range p.readyShares {
		p.readyShares[w] = r.workerPolls[w].Load()
	}
}

// Poll runs the next step of the task's program.
func (p *probe) Poll(cx *executor.Context) (any, bool) {
	r := p.r
	begin := r.tick()
	if !p.inPoll.CompareAndSwap(0, 1) {
		r.violate(checkConcurrentPoll, "task %d: a poll began on worker %d while another poll of it was running", p.id, cx.Worker())
		return nil, false
	}
	p.mu.Lock()
	if p.finished {
		n := len(p.polls) + 1
		p.mu.Unlock()
		p.inPoll.Store(0)
		r.violate(checkPollAfterReady, "task %d: poll %d on worker %d came after the task had finished", p.id, n, cx.Worker())
		return nil, false
	}
	p.polls = append(p.polls, pollRec{begin: begin, worker: cx.Worker()})
	p.waker, p.hasWaker = cx.Waker(), true
	n := r.pollCount.Add(1)
	if w := cx.Worker(); w >= 0 && w < len(r.workerLast) {
		r.workerLast[w].Store(n)
		r.workerSeen.Or(1 << w)
		if w < len(r.workerPolls) {
			r.workerPolls[w].Add(1)
		}
	}
	if p.readyAt >= 0 {
		delay := n - 1 - p.readyAt
		if delay > r.maxDelay.Load() {
			r.maxDelay.Store(delay)
		}
		// From outside, a take is not seen: each worker may have taken a
		// task before this one became ready and begun its poll after, so
		// the measured delay may exceed the executor's figure by the number
		// of workers.
		// The same holds for the executor's work after the poll returns,
		// before a NOTIFIED task is queued again: twice the workers.
		slack := 2 * int64(max(r.workers, 1))
		if r.bound >= 0 && delay > int64(r.bound)+slack && (r.workers == 1 || (r.ctl != nil || time.Since(p.readySince) > starveTime) && r.allWorkersPolledSince(p)) {
			r.violate(checkFairness, "task %d waited %d polls of other tasks between becoming ready and its poll; the executor states a bound of %d for %d tasks (%d allowed for polls begun after takes that came before it was ready)", p.id, delay, r.bound, len(r.probes), slack)
		}
		p.readyAt = -1
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
	return p.id, true
}

func (p *probe) finish() {
	p.mu.Lock()
	p.finished = true
	p.completions++
	p.mu.Unlock()
	p.endPoll()
	p.r.finishedCount.Add(1)
}

func (p *probe) endPoll() {
	end := p.r.tick()
	p.mu.Lock()
	p.polls[len(p.polls)-1].end = end
	if p.readyAtEnd && !p.finished {
		p.setReady()
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
	if r.ctl != nil && !r.stop.Load() && r.pollCount.Load() > 20*r.budget {
		// Under control a schedule may starve a worker (PCT runs the
		// lowest-priority goroutine only when nothing else can run), so a
		// task it holds is never polled while the others go on. That is
		// the schedule's doing, not the executor's: stop without a verdict.
		r.outOfBudget.Store(true)
		r.stop.Store(true)
	}
	if !r.stop.Load() {
		now := r.pollCount.Load()
		var starved []string
		for _, q := range r.probes {
			q.mu.Lock()
			if q.readyAt >= 0 && now-q.readyAt > r.budget && (r.ctl != nil || time.Since(q.readySince) > starveTime) && r.allWorkersPolledSince(q) {
				starved = append(starved, fmt.Sprintf("task %d (ready since poll %d, polled %d times)", q.id, q.readyAt, len(q.polls)))
			}
			q.mu.Unlock()
		}
		if len(starved) > 0 {
			r.violate(checkFairness, "at poll %d, %s: more than %d polls of other tasks while it was ready", now, strings.Join(starved, ", "), r.budget)
			r.stop.Store(true)
		}
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
	if r.ctl != nil {
		r.ctl.Go(fn)
		return
	}
	go fn()
}

// yield lets other goroutines run: a yield point under a Controller.
func (r *caseRun) yield() {
	if r.ctl != nil {
		r.ctl.Yield(executor.PointWake)
		return
	}
	runtime.Gosched()
}

// starveLimit is how many polls of other tasks a ready endless task may
// wait before the fairness check calls it starved, when the executor states
// no bound of its own: far above any fair policy's delay for the few tasks
// of a fairness case (a global-queue check every 61 polls included), and
// reached in well under a millisecond by an unfair one.
const starveLimit = 1000

// starveLimitControlled is starveLimit for controlled cases.
const starveLimitControlled = 300

// allWorkersPolledSince reports whether every worker seen so far has begun
// polls since p became ready: at least one each, on the Go scheduler; under
// a controller, a fair share of the starvation limit each. A ready task
// passed over while some worker polled little or nothing may be held by
// that worker, descheduled (by the operating system, or by a schedule such
// as PCT's that runs a goroutine only when nothing else can) between its
// take and its poll; only when every worker kept polling others is it
// starved. Called with p.mu held.
func (r *caseRun) allWorkersPolledSince(p *probe) bool {
	seen := r.workerSeen.Load()
	workers := int64(bits.OnesCount64(seen))
	need := int64(1)
	if r.ctl != nil && workers > 0 {
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
		} else if r.workerLast[w].Load() <= p.readyAt {
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

// violation is a safety failure seen while the case ran.
type violation struct {
	check  string // the name of the check it fails
	detail string
}

// caseRun is one workload running on one fresh executor.
type caseRun struct {
	ex     executor.Executor
	w      *Workload
	probes []*probe // by id-1

	clock         atomic.Uint64 // the case's logical clock
	pollCount     atomic.Int64
	finishedCount atomic.Int64
	maxDelay      atomic.Int64
	pending       atomic.Int64 // wake goroutines not yet done
	reached       atomic.Int64 // endless tasks polled minPolls times
	stop          atomic.Bool  // endless tasks finish at their next poll
	outOfBudget   atomic.Bool  // a controlled fairness case was stopped without a verdict
	bound         int          // stated fairness bound, -1 if none (fairness cases only)
	workers       int          // from the executor's Describe, 0 if unknown
	workerLast    [64]atomic.Int64
	workerSeen    atomic.Uint64   // bit w: worker w has polled
	workerPolls   [8]atomic.Int64 // polls begun by each of the first workers
	minPolls      int
	budget        int64 // polls of other tasks a ready task may wait before it counts as starved

	mu    sync.Mutex
	viols []violation
	violC chan struct{} // closed at the first violation

	done     chan struct{}
	waitErr  error
	closeErr error
	joinErrs []string
	ended    atomic.Bool // Wait or Close returned
	rec      *recorder
	ctl      *control.Controller // nil for a black-box case
}

func (r *caseRun) tick() uint64 { return r.clock.Add(1) }

func (r *caseRun) violate(check string, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.viols = append(r.viols, violation{check: check, detail: fmt.Sprintf(format, args...)})
	if len(r.viols) == 1 {
		close(r.violC)
	}
}

// newCase builds the probes of w. Tasks are numbered in the order
// Workload.String prints them.
func newCase(w *Workload) *caseRun {
	r := &caseRun{w: w, violC: make(chan struct{}), done: make(chan struct{}), bound: -1}
	var walk func(ts []TaskSpec, outside bool)
	walk = func(ts []TaskSpec, outside bool) {
		for i := range ts {
			p := &probe{r: r, id: len(r.probes) + 1, spec: &ts[i], endless: -1, outside: outside, readyAt: -1}
			r.probes = append(r.probes, p)
			for _, s := range ts[i].Steps {
				walk(s.Spawn, false)
			}
		}
	}
	walk(w.Tasks, true)
	for i := range w.Endless {
		p := &probe{r: r, id: len(r.probes) + 1, spec: &TaskSpec{Priority: w.Endless[i].Priority}, endless: i, outside: true, readyAt: -1}
		r.probes = append(r.probes, p)
	}
	return r
}

// childOf finds the probe of the i-th child spawned at step k of parent.
func (r *caseRun) childOf(parent *probe, k, i int) *probe {
	id := parent.id
	for s := 0; s < k; s++ {
		id += countTasks(parent.spec.Steps[s].Spawn)
	}
	id += countTasks(parent.spec.Steps[k].Spawn[:i]) + 1
	return r.probes[id-1]
}

func countTasks(ts []TaskSpec) int {
	n := 0
	for _, t := range ts {
		n++
		for _, s := range t.Steps {
			n += countTasks(s.Spawn)
		}
	}
	return n
}

func (r *caseRun) spawnChild(parent *probe, k, i int) {
	c := r.childOf(parent, k, i)
	if err := r.spawn(c); err != nil && !r.w.Shutdown {
		r.violate(checkExactlyOnce, "task %d: spawning child task %d from inside its poll failed: %v", parent.id, c.id, err)
	}
}

// spawn spawns p, with its priority when the executor takes priorities.
func (r *caseRun) spawn(p *probe) error {
	p.spawned.Store(true)
	seq := r.tick()
	var h executor.Handle
	var err error
	if pe, ok := r.ex.(executor.Prioritized); ok {
		h, err = pe.SpawnPriority(p, p.spec.Priority)
	} else {
		h, err = r.ex.Spawn(p)
	}
	p.mu.Lock()
	p.handle, p.spawnErr = h, err
	p.mu.Unlock()
	if err != nil {
		p.spawned.Store(false)
		return err
	}
	p.markReady(seq)
	return nil
}

// drive spawns the workload's outside tasks, ends it with Wait or Close,
// and joins every handle.
func (r *caseRun) drive() {
	defer close(r.done)
	var outside []*probe
	for _, p := range r.probes {
		if p.outside {
			outside = append(outside, p)
		}
	}
	spawnAll := func(ps []*probe) {
		for _, p := range ps {
			if err := r.spawn(p); err != nil {
				r.violate(checkExactlyOnce, "task %d: Spawn before Close failed: %v", p.id, err)
			}
		}
	}
	if r.w.Concurrent && len(outside) > 1 {
		half := len(outside) / 2
		if r.ctl != nil {
			// Under control every wait goes through Block.
			done := false
			r.ctl.Go(func() { spawnAll(outside[half:]); done = true })
			spawnAll(outside[:half])
			r.ctl.Block(executor.PointSpawn, func() bool { return done })
		} else {
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); spawnAll(outside[half:]) }()
			spawnAll(outside[:half])
			wg.Wait()
		}
	} else {
		spawnAll(outside)
	}
	if r.w.Shutdown {
		r.closeErr = r.ex.Close()
	} else {
		r.waitErr = r.ex.Wait()
	}
	r.ended.Store(true)
	// Join the tasks that are done; the handle of a task that is not (a
	// failure the checks report) would block for ever.
	for _, p := range r.probes {
		p.mu.Lock()
		h, fin := p.handle, p.finished
		p.mu.Unlock()
		if h == nil || !fin {
			continue
		}
		v, err := h.Join()
		var pe *executor.PanicError
		switch {
		case p.spec.Panic && p.endless < 0:
			if !errors.As(err, &pe) {
				r.joinErrs = append(r.joinErrs, fmt.Sprintf("task %d panicked but Join returned (%v, %v), want a *executor.PanicError", p.id, v, err))
			}
		case err != nil:
			r.joinErrs = append(r.joinErrs, fmt.Sprintf("task %d returned Ready but Join returned error %v", p.id, err))
		case v != p.id:
			r.joinErrs = append(r.joinErrs, fmt.Sprintf("task %d returned %d but Join returned %v", p.id, p.id, v))
		}
	}
	if !r.w.Shutdown {
		r.closeErr = r.ex.Close()
	}
}

// End is how a case ended.
type End uint8

// How a case ends.
const (
	EndWait      End = iota + 1 // Wait (then Close) returned
	EndClose                    // Close returned
	EndViolation                // a safety violation stopped the case early
	EndHang                     // nothing happened for Config.Idle, or Config.Timeout passed; under control, a deadlock
	EndBudget                   // under control, the step budget ran out: no verdict
)

func (e End) String() string {
	switch e {
	case EndWait:
		return "wait returned"
	case EndClose:
		return "close returned"
	case EndViolation:
		return "stopped at a violation"
	case EndHang:
		return "hung"
	case EndBudget:
		return "out of steps"
	}
	return "unknown"
}

// TaskObservation is what the workload saw of one task.
type TaskObservation struct {
	ID          int
	Spawned     bool
	Finished    bool
	Completions int
	Panics      bool
	Polls       []pollRec
	Wakes       []wakeRec
}

// lostWakes returns the wakes after the task's last poll began, if it is
// not finished: wakes that a correct executor must still answer with a poll.
func (t *TaskObservation) lostWakes() []wakeRec {
	if t.Finished || !t.Spawned || len(t.Polls) == 0 {
		return nil
	}
	last := t.Polls[len(t.Polls)-1].begin
	var out []wakeRec
	for _, w := range t.Wakes {
		if w.seq > last {
			out = append(out, w)
		}
	}
	return out
}

// Observation is everything one case saw: the input of every check.
type Observation struct {
	Workload   *Workload
	End        End
	Elapsed    time.Duration
	Tasks      []TaskObservation
	Violations []violation
	WaitErr    error
	CloseErr   error
	JoinErrs   []string
	MaxDelay   int64 // the most polls of other tasks between a task becoming ready and its poll
	Bound      int   // the executor's stated fairness bound for this case, -1 if none
	Header     *traces.Header
	Events     []traces.Event
	// Controlled says the case ran under a control.Controller: its
	// interleaving was chosen, and replays exactly. Checksum is then the
	// controller's checksum of the run (its steps, and the events the
	// executor reported), equal on an exact replay, and Decisions the
	// number of scheduling choices made.
	Controlled bool
	Checksum   uint64
	Decisions  int
	// Control is the controller's error for a controlled case that did not
	// end cleanly: a deadlock (every goroutine blocked), a panic that
	// escaped the executor, a stall, or the step budget.
	Control error
}

// runCase runs w on ex and observes it until it ends, hangs, or shows a
// violation. A hung executor is abandoned, not stopped: its goroutines leak.
//
// With a Controller ctl, the executor must be executor.Controllable: its
// goroutines and the workload's run one at a time under ctl, a hang is a
// deadlock found at once, and the case is deterministic given ctl's
// choices.
func runCase(ex executor.Executor, w *Workload, cfg *Config, ctl *control.Controller) *Observation {
	r := newCase(w)
	r.ex = ex
	r.ctl = ctl
	if rep, ok := ex.(executor.Reporter); ok {
		r.rec = &recorder{}
		if ctl != nil {
			rep.SetRecorder(ctl.Recorder(r.rec))
		} else {
			rep.SetRecorder(r.rec)
		}
	}
	if len(w.Endless) > 0 {
		r.minPolls = 3
		n := len(w.Endless)
		r.budget = starveLimit
		if ctl != nil {
			// Under control no operating system intervenes: a smaller
			// limit, still far above any fair policy's delay.
			r.budget = starveLimitControlled
		}
		if b, ok := ex.(executor.Bounded); ok {
			r.bound = b.FairnessBound(n)
		}
		if d, ok := ex.(executor.Describer); ok {
			r.workers = d.Describe().Workers
		}
	}
	start := time.Now()
	o := &Observation{Workload: w, Bound: r.bound, Controlled: ctl != nil}
	if ctl != nil {
		ex.(executor.Controllable).SetScheduler(ctl)
		o.End = EndWait
		if w.Shutdown {
			o.End = EndClose
		}
		if err := ctl.Run(r.drive); err != nil {
			var dl *control.DeadlockError
			var pe *control.PanicError
			switch {
			case errors.As(err, &dl), errors.As(err, &pe):
				o.End = EndHang
				o.Control = err
			case errors.Is(err, control.ErrBudget):
				o.End = EndBudget
				o.Control = err
			default:
				// A stall: a goroutine blocked outside the controller.
				o.End = EndHang
				o.Control = err
			}
		}
		if len(r.viols) > 0 && o.End != EndHang {
			o.End = EndViolation
		}
		if r.outOfBudget.Load() && len(r.viols) == 0 {
			o.End = EndBudget
		}
		sch := ctl.Schedule()
		o.Checksum, o.Decisions = sch.Checksum, len(sch.Choices)
		return r.observe(o, start)
	}
	go r.drive()

	idle := cfg.idle()
	tick := time.NewTicker(idle / 8)
	defer tick.Stop()
	deadline := start.Add(cfg.timeout())
	// Idle time counts only while the watcher itself runs on time: when the
	// whole process is starved of CPU (a loaded machine, the race detector),
	// a late tick restarts the window instead of reporting a hang.
	last, lastChange, lastTick := r.clock.Load(), time.Now(), time.Now()
wait:
	for {
		select {
		case <-r.done:
			if w.Shutdown {
				o.End = EndClose
			} else {
				o.End = EndWait
			}
			// Wakes still in flight after the end are late wakes; let them
			// land so the observation is complete.
			for t0 := time.Now(); r.pending.Load() > 0 && time.Since(t0) < idle; {
				runtime.Gosched()
			}
			break wait
		case <-r.violC:
			o.End = EndViolation
			break wait
		case now := <-tick.C:
			late := now.Sub(lastTick) > idle/4
			lastTick = now
			if c := r.clock.Load(); c != last || late {
				last, lastChange = c, now
			} else if now.Sub(lastChange) > idle || now.After(deadline) {
				o.End = EndHang
				break wait
			}
		}
	}
	r.stop.Store(true)
	o = r.observe(o, start)
	if o.End == EndHang {
		// The executor is stuck; close it in the background so that a
		// merely slow one can still release its workers.
		go ex.Close()
	}
	return o
}

// observe fills o from the finished (or abandoned) case.
func (r *caseRun) observe(o *Observation, start time.Time) *Observation {
	o.Elapsed = time.Since(start)
	o.MaxDelay = r.maxDelay.Load()
	r.mu.Lock()
	o.Violations = append(o.Violations, r.viols...)
	r.mu.Unlock()
	if o.End == EndWait || o.End == EndClose {
		o.WaitErr, o.CloseErr, o.JoinErrs = r.waitErr, r.closeErr, r.joinErrs
	}
	for _, p := range r.probes {
		p.mu.Lock()
		t := TaskObservation{
			ID: p.id, Spawned: p.spawned.Load(), Finished: p.finished, Completions: p.completions,
			Panics: p.spec.Panic && p.endless < 0,
			Polls:  append([]pollRec(nil), p.polls...),
			Wakes:  append([]wakeRec(nil), p.wakes...),
		}
		p.mu.Unlock()
		sort.Slice(t.Wakes, func(i, j int) bool { return t.Wakes[i].seq < t.Wakes[j].seq })
		o.Tasks = append(o.Tasks, t)
	}
	if r.rec != nil {
		o.Events = r.rec.events()
		if d, ok := r.ex.(executor.Describer); ok {
			h := d.Describe()
			o.Header = &h
		}
	}
	return o
}

// recorder collects the events of an executor that reports them.
type recorder struct {
	mu sync.Mutex
	ev []traces.Event
}

// Record implements executor.Recorder.
func (r *recorder) Record(e traces.Event) {
	r.mu.Lock()
	r.ev = append(r.ev, e)
	r.mu.Unlock()
}

func (r *recorder) events() []traces.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]traces.Event(nil), r.ev...)
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}
