package properties

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/properties/internal/fair"
	"github.com/execspec/execspec/properties/internal/guard"
	"github.com/execspec/execspec/properties/internal/watch"
	"github.com/execspec/execspec/traces"
)

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
	pending       atomic.Int64             // wake goroutines not yet done
	reached       atomic.Int64             // endless tasks polled minPolls times
	stop          atomic.Bool              // endless tasks finish at their next poll
	outOfBudget   atomic.Bool              // a controlled fairness case was stopped without a verdict
	fair          fair.Meter               // what the executor's fairness is held to, and the polls of each worker
	starved       string                   // a seemingly starved task, when no bound is stated (guarded by mu)
	wakeDriven    bool                     // the executor states it never polls spuriously
	requeuing     [8]atomic.Pointer[probe] // a task each of the first workers saw woken during its last poll, until its next poll
	minPolls      int

	mu    sync.Mutex
	viols []violation
	violC chan struct{} // closed at the first violation
	// extraViols counts the violations past maxViolations, kept as a
	// number only, so that an executor that repeats a violation in a loop
	// cannot grow the case's memory.
	extraViols int

	// over is set once the case is over for the observer (a violation or a
	// hang): from then on a poll of a probe is cut off (cutOff) instead of
	// being recorded.
	over atomic.Bool
	cut  chan struct{} // never closed: what a cut-off black-box poll waits on

	done     chan struct{}
	waitErr  error
	closeErr error
	joinErrs []string
	ended    atomic.Bool // Wait or Close returned
	rec      *recorder
	// sched is the scheduler of a controlled case (a control.Controller
	// for an executor.Controllable, the instrumented runtime's for an
	// executor whose package is instrumented), nil for a black-box case.
	sched executor.Scheduler
}

func (r *caseRun) tick() uint64 { return r.clock.Add(1) }

// maxViolations bounds the violations one case keeps with their detail.
const maxViolations = 32

func (r *caseRun) violate(check string, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.viols) >= maxViolations {
		r.extraViols++
		return
	}
	r.viols = append(r.viols, violation{check: check, detail: fmt.Sprintf(format, args...)})
	if len(r.viols) == 1 {
		close(r.violC)
		if r.sched != nil {
			// Under control the case stops at its first violation: every
			// poll from now on blocks (cutOff), and the Controller unwinds
			// the run once nothing else can move.
			r.over.Store(true)
		}
	}
}

// cutOff is what a poll of a probe does once the case is over: it never
// returns, so that an executor that goes on polling after a failure (a
// runaway, re-polling a finished future in a loop) is stopped at its next
// poll instead of spinning and recording for ever. Under a Controller the
// poll blocks on a predicate that never holds: once every controlled
// goroutine is blocked, the Controller reports a deadlock and unwinds them
// all, so nothing leaks. On the Go scheduler the polling goroutine waits on
// a channel that is never closed: it leaks, parked, costing no CPU.
func (r *caseRun) cutOff() {
	if r.sched != nil {
		r.sched.Block(executor.PointPoll, func() bool { return false })
	}
	<-r.cut
}

// closeGrace is how long a failed black-box case waits for the executor's
// Close before abandoning it.
const closeGrace = 10 * time.Millisecond

// stopAfterFailure closes ex after a failed black-box case, waiting at most
// closeGrace: a merely slow executor releases its workers; a stuck or
// runaway one is abandoned, its polls already cut off. A broken Close (a
// panic) must not take the suite down.
func stopAfterFailure(ex executor.Executor) {
	_ = guard.CloseWithin(ex, closeGrace)
}

// newCase builds the probes of w. Tasks are numbered in the order
// Workload.String prints them.
func newCase(w *Workload) *caseRun {
	r := &caseRun{w: w, violC: make(chan struct{}), cut: make(chan struct{}), done: make(chan struct{})}
	r.fair.Bound = -1
	var walk func(ts []TaskSpec, outside bool)
	walk = func(ts []TaskSpec, outside bool) {
		for i := range ts {
			p := &probe{r: r, id: len(r.probes) + 1, spec: &ts[i], endless: -1, outside: outside, ready: fair.Ready{At: -1}}
			r.probes = append(r.probes, p)
			for _, s := range ts[i].Steps {
				walk(s.Spawn, false)
			}
		}
	}
	walk(w.Tasks, true)
	for i := range w.Endless {
		p := &probe{r: r, id: len(r.probes) + 1, spec: &TaskSpec{Priority: w.Endless[i].Priority}, endless: i, outside: true, ready: fair.Ready{At: -1}}
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
	err = guard.Call("Spawn", func() (err error) {
		if pe, ok := r.ex.(executor.Prioritized); ok {
			h, err = pe.SpawnPriority(p, p.spec.Priority)
		} else {
			h, err = r.ex.Spawn(p)
		}
		return err
	})
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
		if r.sched != nil {
			// Under control every wait goes through Block.
			done := false
			r.sched.Go(func() { spawnAll(outside[half:]); done = true })
			spawnAll(outside[:half])
			r.sched.Block(executor.PointSpawn, func() bool { return done })
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
		r.closeErr = r.call("Close", r.ex.Close)
	} else {
		r.waitErr = r.call("Wait", r.ex.Wait)
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
		var v any
		err := r.call("Join", func() (err error) { v, err = h.Join(); return err })
		var pe *executor.PanicError
		switch {
		case p.spec.Panic && p.endless < 0:
			if !errors.As(err, &pe) {
				r.joinErrs = append(r.joinErrs, fmt.Sprintf("task %d panicked but Join returned (%v, %v), want a *executor.PanicError", p.id, v, err))
			}
		case p.spec.Fail && p.endless < 0:
			// The error reaches Join as an error wrapping it, or, from an
			// executor that does not know executor.Failed, as the value.
			var te *taskError
			f, isFailed := v.(executor.Failed)
			if !errors.As(err, &te) && !(err == nil && isFailed && errors.As(f.Err, &te)) {
				r.joinErrs = append(r.joinErrs, fmt.Sprintf("task %d finished with an error but Join returned (%v, %v), want the error", p.id, v, err))
			}
		case err != nil:
			r.joinErrs = append(r.joinErrs, fmt.Sprintf("task %d returned Ready but Join returned error %v", p.id, err))
		case v != p.id:
			r.joinErrs = append(r.joinErrs, fmt.Sprintf("task %d returned %d but Join returned %v", p.id, p.id, v))
		}
	}
	if !r.w.Shutdown {
		r.closeErr = r.call("Close", r.ex.Close)
	}
}

// call calls the executor's method what through guard.Call: a panic in it is a
// violation of the case (and its error), never a crash of the suite.
func (r *caseRun) call(what string, f func() error) error {
	err := guard.Call(what, f)
	var p *guard.Panic
	if errors.As(err, &p) {
		r.violate(checkExactlyOnce, "%v", err)
	}
	return err
}

// startCase makes the case of w on ex, under sched (nil: a black-box
// case): the recorder of a Reporter, the fairness a workload of endless
// tasks is held to, whether polls must be owed to wakes.
func startCase(ex executor.Executor, w *Workload, cfg *Config, sched executor.Scheduler) *caseRun {
	r := newCase(w)
	r.ex = ex
	r.sched = sched
	r.fair.Controlled = sched != nil
	if rep, ok := ex.(executor.Reporter); ok {
		r.rec = &recorder{}
		rep.SetRecorder(r.rec)
	}
	if len(w.Endless) > 0 {
		r.minPolls = max(3, w.EndlessPolls)
		r.setFairness(ex, len(w.Endless), cfg)
	}
	if s, ok := ex.(executor.SpuriousPoller); ok && !s.PollsSpuriously() || cfg.NoSpuriousPolls {
		r.wakeDriven = true
	}
	return r
}

// newObservation is the observation of r before it runs.
func (r *caseRun) newObservation(cfg *Config) *Observation {
	ctl := r.sched != nil
	o := &Observation{Workload: r.w, Bound: r.fair.Bound, BoundWait: r.fair.Wait, Controlled: ctl, PCT: ctl && cfg.PCTDepth > 0, WakeDriven: r.wakeDriven}
	if ctl {
		o.End = EndWait
		if r.w.Shutdown {
			o.End = EndClose
		}
	}
	return o
}

// endControlled completes the observation of a controlled case whose run
// returned err: a deadlock, a panic that escaped the executor or a stall
// is a hang, the step budget no verdict.
func (r *caseRun) endControlled(o *Observation, err error, start time.Time) *Observation {
	if err != nil {
		o.Control = err
		o.End = EndHang
		if errors.Is(err, control.ErrBudget) {
			o.End = EndBudget
		}
	}
	if len(r.viols) > 0 && (o.End != EndHang || r.over.Load()) {
		// A deadlock after a violation is the cut-off's doing.
		o.End = EndViolation
	}
	if r.outOfBudget.Load() && len(r.viols) == 0 {
		o.End = EndBudget
	}
	return r.observe(o, start)
}

// runCase runs w on ex and observes it until it ends, hangs, or shows a
// violation. A hung executor is abandoned, not stopped: its goroutines leak.
//
// With a Controller ctl, the executor must be executor.Controllable: its
// goroutines and the workload's run one at a time under ctl, a hang is a
// deadlock found at once, and the case is deterministic given ctl's
// choices.
func runCase(ex executor.Executor, w *Workload, cfg *Config, ctl *control.Controller) *Observation {
	var sched executor.Scheduler
	if ctl != nil {
		sched = ctl
	}
	r := startCase(ex, w, cfg, sched)
	if r.rec != nil && ctl != nil {
		ex.(executor.Reporter).SetRecorder(ctl.Recorder(r.rec))
	}
	start := time.Now()
	o := r.newObservation(cfg)
	if ctl != nil {
		ex.(executor.Controllable).SetScheduler(ctl)
		err := ctl.Run(r.drive)
		sch := ctl.Schedule()
		o.Checksum, o.Decisions = sch.Checksum, len(sch.Choices)
		return r.endControlled(o, err, start)
	}
	go r.drive()

	idle := cfg.idle()
	switch watch.Case(r.done, r.violC, r.clock.Load, func(d time.Duration) { r.fair.Late.Add(int64(d)) }, idle, start.Add(cfg.timeout())) {
	case watch.Done:
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
	case watch.Violation:
		o.End = EndViolation
	case watch.Hang:
		o.End = EndHang
	}
	if o.End == EndHang {
		o.HangStacks = watch.Stacks(maxHangStacks)
	}
	r.stop.Store(true)
	o = r.observe(o, start)
	// Nothing may poll a probe after the case: a correct executor has
	// finished every task, and a broken one that goes on is cut off.
	r.over.Store(true)
	if o.End == EndViolation || o.End == EndHang || len(o.Violations) > 0 {
		stopAfterFailure(ex)
	}
	return o
}

// observe fills o from the finished (or abandoned) case.
func (r *caseRun) observe(o *Observation, start time.Time) *Observation {
	o.Elapsed = time.Since(start)
	o.MaxDelay = r.fair.MaxDelay.Load()
	o.MaxHeld = r.fair.MaxHeld.Load()
	o.MaxWait = time.Duration(r.fair.MaxWait.Load())
	o.FairnessStated = r.fair.Mode.String()
	r.mu.Lock()
	o.Violations = append(o.Violations, r.viols...)
	o.MoreViolations = r.extraViols
	o.Starved = r.starved
	r.mu.Unlock()
	if o.End == EndWait || o.End == EndClose {
		o.WaitErr, o.CloseErr, o.JoinErrs = r.waitErr, r.closeErr, r.joinErrs
	}
	for _, p := range r.probes {
		p.mu.Lock()
		t := TaskObservation{
			ID: p.id, Spawned: p.spawned.Load(), Finished: p.finished, Completions: p.completions,
			Panics:  p.spec.Panic && p.endless < 0,
			Polls:   append([]pollRec(nil), p.polls...),
			Wakes:   append([]wakeRec(nil), p.wakes...),
			Dropped: p.dropped, FinishedAt: p.finishedAt, Repolls: p.repolls,
		}
		p.mu.Unlock()
		sort.Slice(t.Wakes, func(i, j int) bool { return t.Wakes[i].seq < t.Wakes[j].seq })
		if n, _ := spuriousPolls(&t); n > 0 {
			o.Spurious += n
			o.SpuriousTasks++
		}
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

// maxHangStacks bounds the goroutine stacks an Observation keeps.
const maxHangStacks = 1 << 20
