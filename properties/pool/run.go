package pool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/instrument/rt/rtstd"
	"github.com/execspec/execspec/properties/pool/internal/sweep"
	"github.com/execspec/execspec/properties/stress"
)

// How one case maps onto the properties. Every operation and every task
// records what it saw, on one monotonic clock (nanoseconds since the case
// began); verify and the progress analysis read the records afterwards.
//
//	observation                               property (Op of the finding)
//	a task runs twice                         exactly-once
//	an accepted task never runs               none-lost (not after Cancel)
//	a refused or cancelled submit's task runs refused-not-run (Submit/SubmitContext)
//	an open blocking pool refuses             submit-succeeds; reuse after a Wait
//	more tasks (weight) run at once than      capacity (Submit, or Resize when
//	  the capacity in effect                    a shrink or grow preceded it)
//	Close/Wait returns, a task finishes later shutdown-waits (Close/Wait)
//	Submit/Close/Wait/Resize/Cancel panics    no-panic (the operation), with the
//	                                            stack; reuse for a Submit after Wait
//	no progress for Config.Timeout            no-hang (what the stall followed, or
//	                                            the stuck operation); cancel-stops
//	                                            when Close hangs after Cancel
//	a task waits past the bound with room     progress (Resize, task panic, task
//	                                            Goexit, cancelled submit, Submit)
//	Close/Wait's error versus the tasks'      errors-propagate (Close/Wait)
//	a task starts after Close returned        shutdown-waits; cancel-stops after Cancel
//
// The capacity in effect: a grow counts from the call of Resize, a shrink
// from the moment after it returned that the tasks (weight) running have
// fallen to the new capacity: a pool need not stop running tasks, and a
// task it dispatched before the shrink may begin just after it. With
// Config.LazyShrink a shrink lowers nothing: the bound is the largest
// capacity in effect so far.

// Task states, kept per task id.
const (
	unsubmitted int32 = iota
	accepted
	refused
	panicked // Submit panicked: accepted or not, nobody knows
)

// taskRec is what one task saw. Times are nanoseconds since the case
// began; 0 means never.
type taskRec struct {
	// The small fields first, together: a case allocates one record per
	// task.
	verdict    atomic.Int32
	runs       atomic.Int32
	how        atomic.Int32
	finished   atomic.Bool
	cancelled  atomic.Bool // its context was cancelled before Submit returned
	viaErr     atomic.Bool // submitted with SubmitErr: its error is the pool's to report
	doneBefore atomic.Bool // its context was done before Submit was called
	work       Work
	submitAt   atomic.Int64
	returnAt   atomic.Int64 // Submit returned
	startAt    atomic.Int64
	endAt      atomic.Int64
	err        error // the refusal (written before verdict)
	round      int
	weight     int
	returned   atomic.Pointer[TaskError] // the error it returned

	tr   *tracker
	task Task // what it runs (set by its submit)
	// slot is its id and the operation that submitted it (set by its
	// submit: opOf), which a submitter's slot points to while in it (hang).
	slot slotOp
}

// How a task ended.
const (
	endReturned int32 = iota + 1
	endPanicked
	endGoexit
)

// capChange is one Resize: called at Call, returned at At, to Cap.
type capChange = sweep.Resize

func (tr *tracker) unit() string {
	if tr.ab.weighted != nil {
		return "weight ran"
	}
	return "tasks ran"
}

// tracker observes one case.
type tracker struct {
	w    Workload
	cfg  Config
	p    Pool
	ab   abilities
	base time.Time
	// baseNano is base.UnixNano() when base has no monotonic reading
	// (taken in a testing/synctest bubble, under control; wallBase).
	// time.Since(base) is then Now().Sub(base) on the wall clock, which
	// is the difference of the UnixNanos: clock takes that, at a fifth
	// of the cost (no Sub, no check of it for overflow).
	baseNano int64
	wallBase bool
	// early0 is rt.EarlyTime when the case began: under control, the
	// virtual time that the schedule let pass while a goroutine of the
	// case could run (a timer fired early) is not the pool's, and now
	// leaves it out.
	early0 time.Duration

	ops      int // the workload's operations: the ids below are theirs, those above nested
	children []int
	tasks    []taskRec

	events atomic.Int64 // every observation bumps it: the hang watchdog's pulse
	last   atomic.Int64 // under control: the last instant now returned

	running   atomic.Int64 // weight running
	bound     atomic.Int64 // capacity in effect, 0: none
	resized   atomic.Bool  // a Resize has been called
	resizeMu  sync.Mutex   // held through each Resize: they are serialized
	capMu     sync.Mutex   // held only to read or append capLog
	capLog    []capChange  // under capMu
	capExceed atomic.Pointer[Finding]

	slots []atomic.Pointer[slotOp] // per submitter (+1 for nested): the operation in progress

	inClose      atomic.Bool
	closeCallAt  atomic.Int64
	closeRetAt   atomic.Int64
	cancelAt     atomic.Int64
	lateStart    atomic.Int64 // task id + 1 of a task started after Close returned
	round        atomic.Int32 // the round running
	waitRet      []int64      // per round but the last: when Wait returned
	waitUnfin    [][]int      // per round: accepted tasks unfinished at its Wait's return
	roundErr     []error      // per round: what Wait (or Close, for the last) returned
	roundErrDone []bool

	mu       sync.Mutex
	findings []*Finding

	workers workerLog // under control: the goroutines that ran tasks (workers.go)
	// exit is workerExit, made once rather than at each task's start.
	exit func(task int) (at int64, counts bool, clock int64)

	// The canary: a goroutine that sleeps 1ms at a time and records how
	// late it woke, so that a stall during which the process itself was
	// not scheduled is not blamed on the pool.
	canaryMu sync.Mutex
	canary   []lateness
}

// lateness is one canary sleep: begun at, woke late by.
type lateness struct{ at, late int64 }

func (tr *tracker) runCanary(done <-chan struct{}) {
	const nap = time.Millisecond
	for {
		t0 := tr.now()
		select {
		case <-done:
			return
		case <-time.After(nap):
		}
		late := tr.now() - t0 - int64(nap)
		if late > int64(time.Millisecond) {
			tr.canaryMu.Lock()
			tr.canary = append(tr.canary, lateness{t0, late})
			tr.canaryMu.Unlock()
		}
	}
}

// lateDuring is the longest the canary overslept during [from, to].
func (tr *tracker) lateDuring(from, to int64) int64 {
	tr.canaryMu.Lock()
	defer tr.canaryMu.Unlock()
	var m int64
	for _, l := range tr.canary {
		if l.at <= to && l.at+l.late+int64(time.Millisecond) >= from {
			m = max(m, l.late)
		}
	}
	return m
}

// begin starts the case's clock.
func (tr *tracker) begin() {
	tr.base, tr.early0 = time.Now(), rt.EarlyTime()
	if tr.base == tr.base.Round(0) { // no monotonic reading
		tr.baseNano, tr.wallBase = tr.base.UnixNano(), true
	}
}

// now is the case's next instant (nanoseconds since it began).
func (tr *tracker) now() int64 { return tr.instant(tr.clock()) }

// clock reads the case's clock: nanoseconds since the case began, less,
// under control, the time the schedule let pass early.
//
// Under control the clock is virtual and stands still while the
// goroutines run. With early timers (rt.Config.EarlyTimers, verify
// test's default) the schedule may let it pass while some goroutine
// could run, as if that goroutine were slow: a timeout may expire
// (a cancelled submit, the pool's idle-worker purge), which is the
// point, but a worker held back so is not a slow pool, and the
// progress bound would blame it. The time that passed early is left
// out (rt.EarlyTime): what remains passed only once every goroutine
// was blocked, which a pool that leaves a task waiting while it has
// room is to blame for. It moves only while every goroutine of the pool
// is blocked: two readings with no yield point between are the same.
func (tr *tracker) clock() int64 {
	var n int64
	if tr.wallBase {
		n = time.Now().UnixNano() - tr.baseNano
	} else {
		n = int64(time.Since(tr.base))
	}
	if tr.cfg.control {
		n -= int64(rt.EarlyTime() - tr.early0)
	}
	return n
}

// instant turns a reading of clock into an instant of the case: at
// least 1, and under control distinct from every other instant of the
// case, in the order they were taken, a nanosecond apart; the result
// never decreases.
func (tr *tracker) instant(n int64) int64 {
	n = max(n, 1)
	if !tr.cfg.control {
		return n
	}
	for {
		last := tr.last.Load()
		m := max(n, last+1)
		if tr.last.CompareAndSwap(last, m) {
			return m
		}
	}
}

func (tr *tracker) add(f *Finding) {
	tr.mu.Lock()
	tr.findings = append(tr.findings, f)
	tr.mu.Unlock()
}

func newTracker(w Workload, cfg Config) *tracker {
	tr := &tracker{w: w, cfg: cfg}
	var total int
	tr.ops, tr.children, total = w.layout()
	tr.tasks = make([]taskRec, total)
	for id := range tr.tasks {
		tr.tasks[id].tr, tr.tasks[id].slot.task = tr, id
	}
	tr.exit = tr.workerExit
	i := 0
	for ri, r := range w.Rounds {
		for _, op := range r.Ops {
			t := &tr.tasks[i]
			t.round, t.weight, t.work = ri, max(op.Weight, 1), op.Task.Work
			for c := range op.Task.Children {
				ct := &tr.tasks[tr.children[i]+c]
				ct.round, ct.weight, ct.work = ri, 1, op.Task.Work
			}
			i++
		}
	}
	// A slot per submitter, one for Resize and Cancel, one for nested
	// submits.
	tr.slots = make([]atomic.Pointer[slotOp], w.Submitters+2)
	n := len(w.Rounds)
	tr.waitRet = make([]int64, n)
	tr.waitUnfin = make([][]int, n)
	tr.roundErr = make([]error, n)
	tr.roundErrDone = make([]bool, n)
	return tr
}

func (tr *tracker) capacity() int {
	if tr.w.Options.Capacity > 0 {
		return tr.w.Options.Capacity
	}
	return tr.cfg.Capacity
}

// recordPanic turns a panic of the pool into a finding with its stack.
func (tr *tracker) recordPanic(prop, op string, v any) {
	f := finding(prop, op, "%s panicked: %v", op, v)
	f.Stack = string(debug.Stack())
	tr.add(f)
}

// isTaskPanic says whether v is (or prints as) a task's panic.
func isTaskPanic(v any) bool {
	return strings.Contains(fmt.Sprint(v), "execspec task panic")
}

// run and runErr are the function handed to the pool for the task: its
// record holds what the body needs, so that a submit makes one method
// value rather than a closure over the body and another around it.
func (rec *taskRec) run()          { _ = rec.tr.body(rec.slot.task, rec.task) }
func (rec *taskRec) runErr() error { return rec.tr.body(rec.slot.task, rec.task) }

// body is what task id runs.
func (tr *tracker) body(id int, t Task) error {
	// The task's own code is the suite's, not the pool's
	// (poolCall); the worker that runs it is the pool's again
	// once it returns.
	harness := rt.Harness(true)
	defer rt.Harness(harness)
	rec := &tr.tasks[id]
	tr.events.Add(1)
	at := tr.now()
	tr.workerStart(id, harness)
	if rec.runs.Add(1) == 1 {
		rec.startAt.Store(at)
	}
	if tr.closeRetAt.Load() != 0 {
		tr.lateStart.CompareAndSwap(0, int64(id+1))
	}
	w := int64(rec.weight)
	n := tr.running.Add(w)
	// Without Resize the bound is fixed and checked here, exactly;
	// with Resize, capacityAcrossResize checks it afterwards.
	if b := tr.bound.Load(); b > 0 && n > b && !tr.resized.Load() && tr.capExceed.Load() == nil {
		tr.capExceed.CompareAndSwap(nil, finding(CapacityBound, "Submit", "%d %s at once; the capacity is %d", n, tr.unit(), b))
	}
	rec.how.Store(endGoexit) // until it returns or panics
	defer func() {
		if r := recover(); r != nil {
			rec.how.Store(endPanicked)
			tr.end(id, w)
			panic(r)
		}
		tr.end(id, w)
	}()
	if parent := id; parent < tr.ops {
		for c := range t.Children {
			cid := tr.children[parent] + c
			child := t
			child.Children, child.Amount = 0, t.Amount/2
			if child.Work == WorkHold {
				child.Work = WorkNone
			}
			tr.submit(len(tr.slots)-1, cid, Op{Kind: OpSubmit, Task: child, CancelAfter: -1})
		}
	}
	var err error
	if !tr.cfg.control || t.Work != WorkSpin {
		// Under control a busy loop is nothing: time is virtual and
		// it has no yield point, so no schedule can see it.
		err = t.do(id)
	}
	rec.how.Store(endReturned)
	if te, ok := err.(*TaskError); ok && rec.viaErr.Load() {
		rec.returned.Store(te)
	}
	return err
}

func (tr *tracker) end(id int, w int64) {
	rec := &tr.tasks[id]
	// One reading of the clock for the instant and the worker's clock:
	// nothing between the two could let time pass.
	c := tr.clock()
	rec.endAt.Store(tr.instant(c))
	tr.workerEnd(id, c)
	tr.running.Add(-w)
	rec.finished.Store(true)
	tr.events.Add(1)
}

// submit runs one submitting operation for task id from slot.
func (tr *tracker) submit(slot, id int, op Op) {
	rec := &tr.tasks[id]
	name := submitName(op.Kind == OpSubmitContext, tr.ab.weighted != nil, tr.round.Load() > 0)
	rec.slot.name = name
	tr.slots[slot].Store(&rec.slot)
	defer tr.slots[slot].Store(nil)
	defer func() {
		if r := recover(); r != nil {
			reraiseAbort(r)
			rec.returnAt.Store(tr.now())
			rec.verdict.Store(panicked)
			prop, op := tr.panicCause(name)
			tr.recordPanic(prop, op, r)
			tr.events.Add(1)
		}
	}()
	rec.task = op.Task
	var err error
	switch {
	case op.Kind == OpSubmitContext:
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cancelNow := func() {
			rt.Harness(true) // the suite's callback (a goroutine of its own)
			rec.cancelled.Store(true)
			cancel()
		}
		if op.CancelAfter == 0 {
			rec.doneBefore.Store(true)
			cancelNow()
		} else if op.CancelAfter > 0 {
			t := time.AfterFunc(time.Duration(op.CancelAfter)*time.Microsecond, cancelNow)
			defer t.Stop()
		}
		rec.submitAt.Store(tr.now())
		if tr.ab.weighted != nil {
			poolCall(func() { err = tr.ab.weighted.SubmitWeighted(ctx, rec.weight, rec.run) })
		} else {
			poolCall(func() { err = tr.ab.ctx.SubmitContext(ctx, rec.run) })
		}
	case op.Task.Work == WorkError && tr.ab.errs != nil:
		rec.viaErr.Store(true)
		rec.submitAt.Store(tr.now())
		poolCall(func() { err = tr.ab.errs.SubmitErr(rec.runErr) })
	default:
		rec.submitAt.Store(tr.now())
		poolCall(func() { err = tr.p.Submit(rec.run) })
	}
	rec.returnAt.Store(tr.now())
	tr.events.Add(1)
	if err != nil {
		rec.err = err
		rec.verdict.Store(refused)
	} else {
		rec.verdict.Store(accepted)
	}
}

// submitName is the name of a submitting operation: SubmitContext (or
// SubmitWeighted, for a pool that takes weights) or Submit, after Wait in
// a later round; constants, so that a submit builds no string.
func submitName(withContext, weighted, afterWait bool) string {
	switch {
	case withContext && weighted && afterWait:
		return "SubmitWeighted after Wait"
	case withContext && weighted:
		return "SubmitWeighted"
	case withContext && afterWait:
		return "SubmitContext after Wait"
	case withContext:
		return "SubmitContext"
	case afterWait:
		return "Submit after Wait"
	}
	return "Submit"
}

// slotOp is the operation a submitter (or the controller) is in, for
// the description of a hang: its name and its task (if task >= 0).
type slotOp struct {
	name string
	task int
}

func (o *slotOp) String() string {
	if o.task < 0 {
		return o.name
	}
	return fmt.Sprintf("%s of task %d", o.name, o.task)
}

// resize runs a Resize operation; resizes are serialized, so that the
// capacity in effect is well defined.
func (tr *tracker) resize(slot int, n int) {
	tr.resizeMu.Lock()
	defer tr.resizeMu.Unlock()
	tr.slots[slot].Store(&slotOp{fmt.Sprintf("Resize(%d)", n), -1})
	defer tr.slots[slot].Store(nil)
	defer func() {
		if r := recover(); r != nil {
			reraiseAbort(r)
			tr.recordPanic(NoPanic, "Resize", r)
		}
	}()
	tr.resized.Store(true)
	call := tr.now()
	poolCall(func() { tr.ab.resize.Resize(n) })
	// Not under resizeMu alone: a Resize that never returns (a run
	// stopped while the controller was in it) holds resizeMu for good,
	// and the description of the hang reads capLog as the run unwinds.
	tr.capMu.Lock()
	tr.capLog = append(tr.capLog, capChange{Call: call, At: tr.now(), Cap: n})
	tr.capMu.Unlock()
	tr.events.Add(1)
}

func (tr *tracker) cancelPool(slot int) {
	tr.slots[slot].Store(&slotOp{"Cancel", -1})
	defer tr.slots[slot].Store(nil)
	defer func() {
		if r := recover(); r != nil {
			reraiseAbort(r)
			tr.recordPanic(NoPanic, "Cancel", r)
		}
	}()
	tr.cancelAt.CompareAndSwap(0, tr.now())
	poolCall(tr.ab.cancel.Cancel)
	tr.events.Add(1)
}

// finish calls Close or Wait (fn) for round ri and records what it
// returned; a propagated task panic counts as a return.
func (tr *tracker) finish(ri int, name string, fn func() error) {
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				reraiseAbort(r)
				if !(tr.cfg.Panics == PanicsPropagated && isTaskPanic(r)) {
					prop, op := NoPanic, name
					switch {
					case name == "Close" && tr.w.CloseEarly:
						op = "Close racing submitters"
					case tr.cancelAt.Load() != 0:
						op = name + " after Cancel"
					case name == "Wait":
						prop = Reuse
					case ri > 0:
						prop, op = Reuse, name+" after Wait"
					}
					tr.recordPanic(prop, op, r)
				}
				err = errPoolPanicked
			}
		}()
		poolCall(func() { err = fn() })
	}()
	tr.mu.Lock()
	tr.roundErr[ri], tr.roundErrDone[ri] = err, true
	tr.mu.Unlock()
	tr.events.Add(1)
}

// panicCause attributes a panic of the operation name (a submit, or a
// Close after Wait) to what raced it: a Close already called (Close
// racing submitters, Config.CloseEarly) or a Cancel already called comes
// before reuse, so that a panic they cause is not filed as "reuse"; only
// a panic in a later round with neither is the reuse property's.
func (tr *tracker) panicCause(name string) (prop, op string) {
	switch {
	case tr.closeCallAt.Load() != 0 && name != "Close" && !strings.HasPrefix(name, "Close "):
		return NoPanic, name + " racing Close"
	case tr.cancelAt.Load() != 0:
		return NoPanic, name + " after Cancel"
	case tr.round.Load() > 0:
		return Reuse, name
	}
	return NoPanic, name
}

// errPoolPanicked stands for the result of an operation that panicked.
var errPoolPanicked = errors.New("the pool panicked")

// poolCall runs f, a call into the pool (newPool, Submit, Resize, Cancel,
// Close, Wait), as the code under test. Under control the suite's own
// goroutines (the body, the submitters, the controller) and a task's own
// code are the harness's (rt.Harness): time the schedule lets pass early
// while only they could run passed with the pool blocked, and counts
// against its progress; time let pass while one of the pool's goroutines
// (or a submitter inside the pool) could run is the schedule's holding
// it back, and does not (tracker.now). Outside control it only calls f.
func poolCall(f func()) {
	defer rt.Harness(rt.Harness(false))
	f()
}

// RunWorkload runs one workload on a fresh pool and returns its findings
// joined (each a *Finding), or nil. A hang leaks the goroutines stuck in
// the pool: they cannot be stopped from outside. Under verify test (the
// controlled mode) the workload runs in the controlled run of the calling
// test, and a hang is the scheduler's to report.
func RunWorkload(newPool func() Pool, w Workload, cfg Config) error {
	return RunWorkloadOptions(func(Options) Pool { return newPool() }, w, cfg)
}

// RunWorkloadOptions is RunWorkload for a constructor that takes Options.
func RunWorkloadOptions(newPool func(Options) Pool, w Workload, cfg Config) error {
	cfg = cfg.withDefaults()
	cfg.control = underControl()
	return errors.Join(asErrors(runCase(newPool, w, cfg))...)
}

func asErrors(fs []*Finding) []error {
	out := make([]error, len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}

// runCase runs w and returns its findings, each with the pool's
// configuration and the case.
func runCase(newPool func(Options) Pool, w Workload, cfg Config) []*Finding {
	if w.Options.Capacity == 0 {
		w.Options.Capacity = cfg.Capacity
	}
	tr := newTracker(w, cfg)
	tr.begin()
	var fs []*Finding
	if cfg.control {
		fs = tr.runControlled(newPool)
		for _, f := range fs {
			f.Pool = w.Options.String()
			f.Workload = w.String()
		}
		return fs
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr.run(newPool)
	}()
	go tr.runCanary(done)
	if hung := tr.watch(done); hung != nil {
		tr.mu.Lock()
		fs = append(slices.Clone(tr.findings), hung)
		tr.mu.Unlock()
	} else {
		fs = tr.verify()
	}
	for _, f := range fs {
		f.Pool = w.Options.String()
		f.Workload = w.String()
	}
	return fs
}

// watch waits for the case to end, and returns a hang finding if it goes
// Config.Timeout without any observation.
func (tr *tracker) watch(done <-chan struct{}) *Finding {
	tick := time.NewTicker(tr.cfg.Timeout / 8)
	defer tick.Stop()
	last, lastAt := tr.events.Load(), time.Now()
	for {
		select {
		case <-done:
			return nil
		case <-tick.C:
			if e := tr.events.Load(); e != last {
				last, lastAt = e, time.Now()
			} else if time.Since(lastAt) >= tr.cfg.Timeout {
				return tr.hang()
			}
		}
	}
}

func (tr *tracker) run(newPool func(Options) Pool) {
	func() {
		defer func() {
			if r := recover(); r != nil {
				reraiseAbort(r)
				tr.recordPanic(NoPanic, "newPool", r)
			}
		}()
		poolCall(func() { tr.p = newPool(tr.w.Options) })
	}()
	if tr.p == nil {
		return
	}
	tr.ab = abilitiesOf(tr.p)
	if c := tr.capacity(); c > 0 {
		tr.bound.Store(int64(c))
	}
	var cpus []int
	if tr.cfg.Pin && !tr.cfg.control {
		cpus, _ = stress.CPUs()
	}
	w := tr.w
	base := 0
	for ri, round := range w.Rounds {
		tr.round.Store(int32(ri))
		last := ri == len(w.Rounds)-1
		early := last && w.CloseEarly
		parties := w.Submitters
		if early {
			parties++
		}
		// Under control the submitters start as the scheduler picks: a
		// spin barrier would only spin.
		var b *stress.Barrier
		if !tr.cfg.control {
			b = stress.NewBarrier(parties, time.Second)
		}
		// rtstd's WaitGroup and rt's Go, Sleep, Recv and Close are Go's
		// own outside a controlled run, and the scheduler's yield points
		// inside one.
		var wg rtstd.WaitGroup
		for s := range w.Submitters {
			wg.Add(1)
			fn := func() {
				defer wg.Done()
				if b != nil {
					b.Wait()
				}
				for i := s; i < len(round.Ops); i += w.Submitters {
					if !isControl(round.Ops[i]) {
						tr.do(s, base+i, round.Ops[i])
					}
				}
			}
			if len(cpus) > 0 {
				// Pinned to distinct CPUs (round robin), where permitted;
				// a submitter that cannot be pinned still runs.
				stress.Go(cpus[s%len(cpus)], fn)
			} else {
				rt.Go(fn)
			}
		}
		// Resize and Cancel run on a goroutine of their own, each after
		// its Delay, so that they meet submitters blocked in Submit.
		if slices.ContainsFunc(round.Ops, isControl) {
			wg.Add(1)
			rt.Go(func() {
				defer wg.Done()
				for _, op := range round.Ops {
					if isControl(op) {
						rt.Sleep(time.Duration(op.Delay) * time.Microsecond)
						tr.do(len(tr.slots)-2, -1, op)
					}
				}
			})
		}
		var closed chan struct{}
		if early {
			closed = make(chan struct{})
			rt.Go(func() {
				defer rt.Close(closed)
				if b != nil {
					b.Wait()
				}
				tr.close(ri)
			})
		}
		wg.Wait()
		base += len(round.Ops)
		if early {
			rt.Recv(closed)
			break
		}
		if last {
			tr.close(ri)
			break
		}
		if tr.ab.wait == nil {
			continue
		}
		tr.finish(ri, "Wait", tr.ab.wait.Wait)
		tr.waitRet[ri] = tr.now()
		tr.waitUnfin[ri] = tr.unfinished(func(t *taskRec) bool { return t.round <= ri })
	}
}

// isControl says whether op is the controller's (Resize, Cancel), not a
// submitter's.
func isControl(op Op) bool { return op.Kind == OpResize || op.Kind == OpCancel }

func (tr *tracker) do(slot, id int, op Op) {
	switch op.Kind {
	case OpResize:
		if tr.ab.resize != nil {
			tr.resize(slot, op.Size)
		}
	case OpCancel:
		if tr.ab.cancel != nil {
			tr.cancelPool(slot)
		}
	default:
		if op.Kind == OpSubmitContext && tr.ab.ctx == nil && tr.ab.weighted == nil {
			op.Kind = OpSubmit
		}
		tr.submit(slot, id, op)
	}
}

func (tr *tracker) close(ri int) {
	tr.inClose.Store(true)
	tr.closeCallAt.Store(tr.now())
	tr.finish(ri, "Close", tr.p.Close)
	tr.closeRetAt.Store(tr.now())
	tr.inClose.Store(false)
}

// unfinished lists the accepted tasks that match and have not finished.
func (tr *tracker) unfinished(match func(*taskRec) bool) []int {
	var out []int
	for id := range tr.tasks {
		t := &tr.tasks[id]
		if t.verdict.Load() == accepted && !t.finished.Load() && match(t) {
			out = append(out, id)
		}
	}
	return out
}

// verify checks the properties once the case has ended.
func (tr *tracker) verify() []*Finding {
	tr.mu.Lock()
	errs := slices.Clone(tr.findings)
	tr.mu.Unlock()
	if tr.p == nil {
		return errs
	}
	add := func(f *Finding) { errs = append(errs, f) }
	cancelled := tr.cancelAt.Load() != 0
	all := func(*taskRec) bool { return true }
	unfinished := tr.unfinished(all)
	if len(unfinished) > 0 {
		// On the case's clock: under control, a grace that passed early
		// (the stragglers could still run) is no grace.
		deadline := tr.now() + int64(tr.cfg.Grace)
		for tr.now() < deadline && len(tr.unfinished(all)) > 0 {
			rt.Sleep(time.Millisecond)
		}
	}
	after := tr.unfinished(all)
	last := len(tr.w.Rounds) - 1
	closeErr := tr.roundErr[last]
	closeClean := closeErr == nil || tr.isTaskErr(closeErr) || errors.Is(closeErr, errPoolPanicked) && tr.cfg.Panics == PanicsPropagated
	if closeClean {
		late := slices.DeleteFunc(slices.Clone(unfinished), func(id int) bool { return slices.Contains(after, id) })
		if len(late) > 0 {
			add(finding(ShutdownWaits, "Close", "Close returned before %d accepted tasks had finished (%s); they finished after it returned", len(late), ids(late)))
		}
		if len(after) > 0 && !cancelled {
			add(finding(NoneLost, tr.opOf(after[0]), "%d accepted tasks never finished (%s), and Close returned %v", len(after), ids(after), closeErr))
		}
	}
	if id := tr.lateStart.Load(); id > 0 {
		if cancelled {
			add(finding(CancelStops, "Cancel", "task %d started after Close returned, the pool having been cancelled", id-1))
		} else if closeClean {
			add(finding(ShutdownWaits, "Close", "task %d started after Close returned", id-1))
		}
	}
	for ri := range last {
		if tr.waitRet[ri] == 0 {
			continue
		}
		late := slices.DeleteFunc(slices.Clone(tr.waitUnfin[ri]), func(id int) bool { return slices.Contains(after, id) })
		if len(late) > 0 && (tr.roundErr[ri] == nil || tr.isTaskErr(tr.roundErr[ri])) {
			add(finding(ShutdownWaits, "Wait", "Wait returned before %d tasks accepted before it had finished (%s)", len(late), ids(late)))
		}
	}
	var twice, refusedRan []int
	for id := range tr.tasks {
		t := &tr.tasks[id]
		if t.runs.Load() > 1 {
			twice = append(twice, id)
		}
		if t.verdict.Load() == refused && t.runs.Load() > 0 {
			refusedRan = append(refusedRan, id)
		}
	}
	if len(twice) > 0 {
		add(finding(ExactlyOnce, tr.opOf(twice[0]), "%d tasks ran more than once (%s: %d times)", len(twice), ids(twice), tr.tasks[twice[0]].runs.Load()))
	}
	if len(refusedRan) > 0 {
		t := &tr.tasks[refusedRan[0]]
		add(finding(RefusedNotRun, tr.opOf(refusedRan[0]), "%d tasks ran although their submit failed (%s: %v)", len(refusedRan), ids(refusedRan), t.err))
	}
	if !tr.cfg.mayRefuse(tr.w.Options) {
		// Before Close and Cancel, a blocking pool accepts every task
		// whose context was not cancelled.
		var first, reuse []int
		for id := range tr.tasks {
			t := &tr.tasks[id]
			if t.verdict.Load() != refused || t.cancelled.Load() || id >= tr.ops {
				continue
			}
			if c := tr.closeCallAt.Load(); c != 0 && t.returnAt.Load() >= c {
				continue
			}
			if c := tr.cancelAt.Load(); c != 0 && t.returnAt.Load() >= c {
				continue
			}
			if t.round > 0 {
				reuse = append(reuse, id)
			} else {
				first = append(first, id)
			}
		}
		if len(first) > 0 && !(tr.w.CloseEarly && last == 0) {
			add(finding(SubmitSucceeds, tr.opOf(first[0]), "%d submits refused while the pool was open (%s: %v)", len(first), ids(first), tr.tasks[first[0]].err))
		}
		if len(reuse) > 0 {
			add(finding(Reuse, tr.opOf(reuse[0]), "%d submits refused after Wait (%s: %v)", len(reuse), ids(reuse), tr.tasks[reuse[0]].err))
		}
	}
	if f := tr.capExceed.Load(); f != nil {
		add(f)
	}
	if tr.cfg.RefuseDone {
		var done []int
		for id := range tr.tasks {
			if t := &tr.tasks[id]; t.doneBefore.Load() && t.verdict.Load() == accepted {
				done = append(done, id)
			}
		}
		if len(done) > 0 {
			add(finding(DoneRefused, tr.opOf(done[0]), "%d submits accepted although their context was done before the call (%s)", len(done), ids(done)))
		}
	}
	if f := tr.capacityAcrossResize(); f != nil {
		add(f)
	}
	if !cancelled && tr.ab.errs != nil && tr.cfg.Errors != ErrorsIgnored {
		for ri := range tr.w.Rounds {
			if f := tr.checkErrors(ri); f != nil {
				add(f)
			}
		}
	}
	if f := tr.progress(tr.now(), false); f != nil {
		add(f)
	}
	return errs
}

// capacityAcrossResize checks the capacity when the pool was resized. At
// each task's start, the tasks (weight) running, itself included, must
// not exceed the largest capacity in effect since it was submitted: the
// pool may have dispatched it under an older, larger capacity just before
// a shrink. A grow counts from the call of Resize, a shrink from its
// return; tasks already running when a shrink returns are not stopped,
// but no task submitted after it may start until they fit.
func (tr *tracker) capacityAcrossResize() *Finding {
	b := sweep.Take()
	defer b.Give()
	tr.capMu.Lock()
	b.CapLog = append(b.CapLog[:0], tr.capLog...)
	tr.capMu.Unlock()
	log := b.CapLog
	c0 := tr.capacity()
	if len(log) == 0 || c0 <= 0 {
		return nil
	}
	// capAt is the capacity in effect at t; with LazyShrink, the largest
	// so far.
	capAt := func(t int64) int {
		c := c0
		for _, ch := range log {
			if ch.Cap > c && ch.Call <= t || ch.At <= t && !tr.cfg.LazyShrink {
				c = ch.Cap
			}
		}
		return c
	}
	// The capacity changes only at a Resize's call or return (steps, in
	// order, each with the capacity from it, computed once): the largest
	// in effect over [from, to] is that of the last step at or before
	// from (c0 before the first), or of a step within.
	steps := b.Steps[:0]
	least := c0 // no capacity in effect is less: capAt is c0 or a Resize's
	for _, ch := range log {
		steps = append(steps, sweep.Step{At: ch.Call, Cap: capAt(ch.Call)}, sweep.Step{At: ch.At, Cap: capAt(ch.At)})
		least = min(least, ch.Cap)
	}
	slices.SortFunc(steps, func(a, b sweep.Step) int { return cmp.Compare(a.At, b.At) })
	b.Steps = steps
	maxCap := func(from, to int64) int {
		i, _ := slices.BinarySearchFunc(steps, from+1, func(s sweep.Step, t int64) int { return cmp.Compare(s.At, t) })
		m := c0
		if i > 0 {
			m = steps[i-1].Cap
		}
		for ; i < len(steps) && steps[i].At <= to; i++ {
			m = max(m, steps[i].Cap)
		}
		return m
	}
	// The weight running at t: that of the tasks started at or before t,
	// less that of those of them ended at or before t. One sweep over the
	// starts and ends in order (not a pass over every task for each task)
	// has it at each start; the first task by id found over its bound is
	// the finding, as a pass in id order would find it. A weight within
	// the least capacity ever in effect is within any bound: the bound
	// is looked up only for a start over it.
	edges := slices.Grow(b.Edges[:0], 2*len(tr.tasks))
	for j := range tr.tasks {
		s, e := tr.tasks[j].startAt.Load(), tr.tasks[j].endAt.Load()
		if s == 0 {
			continue
		}
		edges = append(edges, sweep.Edge{At: s, ID: j, Kind: sweep.Start})
		if e != 0 {
			edges = append(edges, sweep.Edge{At: max(s, e), ID: j, Kind: sweep.End})
		}
	}
	b.Keys = sweep.SortEdges(edges, b.Keys, 44)
	b.Edges = edges
	var running, over int64
	first, bound := -1, 0
	for i := 0; i < len(edges); {
		t0 := edges[i].At
		k := i
		for ; k < len(edges) && edges[k].At == t0; k++ {
			if w := int64(tr.tasks[edges[k].ID].weight); edges[k].Kind == sweep.Start {
				running += w
			} else {
				running -= w
			}
		}
		for _, e := range edges[i:k] {
			if e.Kind != sweep.Start || first >= 0 && e.ID > first || running <= int64(least) {
				continue
			}
			sub := tr.tasks[e.ID].submitAt.Load()
			if sub == 0 {
				continue
			}
			if b := maxCap(sub, t0); running > int64(b) {
				first, over, bound = e.ID, running, b
			}
		}
		i = k
	}
	if first >= 0 {
		return finding(CapacityBound, "Resize", "%d %s at once when task %d started; the capacity in effect since it was submitted was at most %d", over, tr.unit(), first, bound)
	}
	return nil
}

// opOf names the operation that submitted task id.
func (tr *tracker) opOf(id int) string {
	if op := tr.tasks[id].slot.name; op != "" {
		return op
	}
	return "Submit"
}

func (tr *tracker) isTaskErr(err error) bool {
	var te *TaskError
	return errors.As(err, &te)
}

// checkErrors compares what the Wait or Close ending round ri returned
// with the errors its tasks returned.
func (tr *tracker) checkErrors(ri int) *Finding {
	if !tr.roundErrDone[ri] || errors.Is(tr.roundErr[ri], errPoolPanicked) {
		return nil
	}
	got := tr.roundErr[ri]
	op := "Close"
	if ri < len(tr.w.Rounds)-1 {
		op = "Wait"
	}
	var mine, earlier []*TaskError
	for id := range tr.tasks {
		t := &tr.tasks[id]
		te := t.returned.Load()
		if te == nil || t.verdict.Load() != accepted {
			continue
		}
		switch {
		case t.round == ri:
			mine = append(mine, te)
		case t.round < ri:
			earlier = append(earlier, te)
		}
	}
	for _, te := range earlier {
		if errors.Is(got, te) {
			return finding(ErrorsPropagate, op, "%s returned the error of task %d, from an earlier round: %v", op, te.ID, got)
		}
	}
	if len(mine) == 0 {
		if tr.isTaskErr(got) {
			return finding(ErrorsPropagate, op, "%s returned a task error although no task of its round returned one: %v", op, got)
		}
		return nil
	}
	if got == nil {
		return finding(ErrorsPropagate, op, "%s returned nil although %d tasks returned errors (task %d: %v)", op, len(mine), mine[0].ID, mine[0])
	}
	switch tr.cfg.Errors {
	case ErrorsFirst:
		if !slices.ContainsFunc(mine, func(te *TaskError) bool { return errors.Is(got, te) }) {
			return finding(ErrorsPropagate, op, "%s returned %v, which is none of the %d errors its tasks returned", op, got, len(mine))
		}
	case ErrorsAll:
		for _, te := range mine {
			if !errors.Is(got, te) {
				return finding(ErrorsPropagate, op, "%s returned %v, which lacks the error of task %d (%d tasks returned errors)", op, got, te.ID, len(mine))
			}
		}
	}
	return nil
}

// hang describes where a case that made no progress is stuck.
func (tr *tracker) hang() *Finding {
	var where []string
	var stuckOp string
	for s := range tr.slots {
		if op := tr.slots[s].Load(); op != nil {
			who := fmt.Sprintf("submitter %d", s)
			switch s {
			case len(tr.slots) - 1:
				who = "a task submitting a nested task"
			case len(tr.slots) - 2:
				who = "the controller"
			}
			where = append(where, fmt.Sprintf("%s in %s", who, op))
			if stuckOp == "" {
				stuckOp = op.name
			}
		}
	}
	if tr.inClose.Load() {
		where = append(where, "Close has not returned")
		stuckOp = "Close"
	}
	var notRun, running []int
	for id := range tr.tasks {
		t := &tr.tasks[id]
		switch {
		case t.runs.Load() == 0 && t.submitAt.Load() != 0 && t.verdict.Load() != refused:
			notRun = append(notRun, id)
		case t.runs.Load() > 0 && !t.finished.Load():
			running = append(running, id)
		}
	}
	msg := fmt.Sprintf("no progress for %v", tr.cfg.Timeout)
	if tr.cfg.control {
		msg = "the scheduler stopped the case (every goroutine blocked with no timer pending, a goroutine leaked past the end, or the run's step budget: the scheduler's report says which)"
	}
	if len(where) > 0 {
		msg += ": " + strings.Join(where, "; ")
	}
	if len(notRun) > 0 {
		msg += fmt.Sprintf("; %d tasks never ran (%s)", len(notRun), ids(notRun))
	}
	if len(running) > 0 {
		msg += fmt.Sprintf("; %d tasks still running (%s)", len(running), ids(running))
	}
	prop, op := NoHang, stuckOp
	if tr.cancelAt.Load() != 0 {
		prop, op = CancelStops, "Cancel"
	} else if st := tr.progress(tr.now(), true); st != nil {
		// A task the pool had room for never started: name what the
		// stall followed, so that hangs of one cause are one defect.
		op = st.Op
		msg += "; " + st.Detail
	}
	if op == "" {
		op = "Submit"
	}
	f := finding(prop, op, "%s", msg)
	if !tr.cfg.control { // under control, rt reports the blocked goroutines
		buf := make([]byte, 1<<16)
		f.Stack = string(buf[:runtime.Stack(buf, true)])
	}
	return f
}

// ids formats task ids, at most 10 of them.
func ids(list []int) string {
	var b strings.Builder
	b.WriteString("task")
	if len(list) > 1 {
		b.WriteString("s")
	}
	for i, id := range list {
		if i == 10 {
			fmt.Fprintf(&b, " … and %d more", len(list)-10)
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %d", id)
	}
	return b.String()
}
