package rt

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/execspec/execspec/executor/point"
	"github.com/execspec/execspec/instrument/rt/rtproc"
	"github.com/execspec/execspec/instrument/rt/rtreport"
	"github.com/execspec/execspec/internal/goid"
	"github.com/execspec/execspec/properties/control/sched"
)

// Config sets the strategy and budgets of one controlled run. The zero
// Config works: sched.Random(1), DefaultMaxSteps, DefaultFair,
// DefaultHorizon.
type Config struct {
	// Strategy chooses among the enabled goroutines at each decision
	// (sched.Random, sched.NewPCT, sched.NewReplay, ...).
	Strategy sched.Strategy
	// MaxSteps bounds the yield points of a run; a run that reaches it
	// stops with an error wrapping sched.ErrBudget (unknown, not a
	// failure).
	MaxSteps int
	// Fair bounds the consecutive steps of one goroutine while others are
	// enabled: after Fair of them the next enabled goroutine runs, whatever
	// the Strategy says, so that a spin loop (a CAS retried with Gosched)
	// cannot keep a search running forever.
	Fair int
	// Horizon is how much virtual time may pass with every controlled
	// goroutine blocked and none woken before the run is called a
	// deadlock (or a leak, once the body returned).
	Horizon time.Duration
	// LeakAfter is how much virtual time goroutines may go on after the
	// test's body returned (sleeping, waking on timers) before they are
	// reported as leaked although not blocked for good.
	LeakAfter time.Duration
	// Seed seeds the choices among the ready cases of a select under PCT
	// (PCT orders goroutines, not cases).
	Seed uint64
	// EarlyTimers lets timers fire while other goroutines could run: while
	// some goroutine waits for a timer (a sleep, a timer's or ticker's
	// channel, an AfterFunc), letting time pass is one more candidate at
	// one decision in four (timers.go), and choosing it lets virtual time
	// pass until the earliest timer fires while the others wait, as if
	// they were slow; EarlyTime tells how much time passed so. The
	// test's own timers never fire so (testtimers.go). Without it time passes only once every controlled
	// goroutine is blocked, so goroutines seem infinitely fast: bugs that
	// need a timer to fire before another goroutine gets to run are out of
	// reach, and tests that wait with a sleep never see it too short. Go
	// 1.26 only (the runtime's timers are read); elsewhere it does nothing.
	EarlyTimers bool
	// Quiet is how much virtual time only housekeeping (goroutines woken
	// by tickers) may run, with another goroutine blocked, before the run
	// is a hang (housekeeping.go).
	Quiet time.Duration
}

// Defaults for the zero Config.
const (
	DefaultMaxSteps  = 100_000
	DefaultFair      = 64
	DefaultHorizon   = time.Hour
	DefaultLeakAfter = time.Second
)

type gstate uint8

const (
	gRunnable gstate = iota // may run: waiting for its turn, or running
	gBlocked                // waiting for w.ready, or (external phase) in a real operation
	gDone
)

// wait is what a blocked goroutine waits for.
type wait struct {
	op    string      // "chan receive", "Mutex.Lock", ... for reports
	ready func() bool // side-effect free: the goroutine can go on now
	// woken, if not nil, stands for ready: the goroutine can go on once
	// *woken (a Cond.Wait: no closure to allocate at every wait).
	woken *bool
	// sel, for a select (a send, a receive), stands for ready and timed,
	// and performs the operation for real (sel.ext: a blocking select
	// with cancel as one more case) when no controlled goroutine can run:
	// then only uncontrolled goroutines and timers can end the wait.
	sel *selWait
	// timed, if not nil, reports whether a timer that will fire can end
	// the wait (a receive from a timer's channel): the schedule may then
	// let virtual time pass to that timer while other goroutines could
	// run (they are then slow, not stopped), instead of only once every
	// controlled goroutine is blocked.
	timed func() bool
	// tick: a ticker's channel can end the wait (housekeeping.go).
	tick bool
	// polled: uncontrolled goroutines can make ready hold (the standard
	// library's sync, stdsync.go; a spin on an atomic, SpinCAS): the
	// external phase looks again after 1, 2, 4... ms of virtual time.
	polled bool
}

// isReady reports whether w can end now (side-effect free).
func (r *run) isReady(w *wait) bool {
	if w.sel != nil {
		return w.sel.ready(r)
	}
	if w.woken != nil {
		return *w.woken
	}
	return w.ready()
}

// isTimed reports whether a timer that will fire can end w.
func (w *wait) isTimed() bool {
	if w.sel != nil {
		return w.sel.timed()
	}
	return w.timed != nil && w.timed()
}

// canRun reports whether g may run now: runnable, or blocked on a wait
// that can end.
func (r *run) canRun(g *gor) bool {
	switch g.state {
	case gRunnable:
		return true
	case gBlocked:
		if sw := g.w.sel; sw != nil {
			return sw.ready(r)
		}
		if g.w.woken != nil {
			return *g.w.woken
		}
		return g.w.ready()
	}
	return false
}

// gor is one controlled goroutine. Its fields are touched only by whoever
// holds control (a controlled goroutine or the coordinator); every handover
// is a channel operation, which orders their memory.
type gor struct {
	id     int
	gp     atomic.Uintptr // runtime descriptor, set by the goroutine itself
	sem    chan struct{}  // capacity 1: a send gives this goroutine control
	state  gstate
	w      wait
	extReq bool // the coordinator asks for the real operation (external phase)
	// condWoken is the flag of the Cond.Wait g is in (wait.woken).
	condWoken bool
	sleep     *time.Timer // Sleep's
	extOK     bool        // the real operation completed
	cancel    chan struct{}
	stack     []byte // taken when a deadlocked or leaked goroutine is unwound
	house     bool   // woken by a ticker: its steps are housekeeping, not progress
	daemon    bool   // started by the packages' initialisation (or by such a goroutine): the run ends without it

	// harness: running the test's own code, not the code under test
	// (Harness): time let pass while only such goroutines could run is
	// not early (timers.go).
	harness bool

	atExit []func() // AtExit: called when the goroutine ends
	op     [2]any   // its last plain sends or receives, to use again (chan.go)

	// wk is the worker g runs on (gpool.go), nil for an adopted timer
	// callback; freed: it goes back to the free list as g ends. r and fn
	// are g's run and function, for the worker (Run).
	wk    *rtproc.Worker
	freed bool
	r     *run
	fn    func()
}

// abortSignal unwinds a controlled goroutine when a run is stopped.
type abortSignal struct{}

var abortValue any = &abortSignal{}

// IsAbort reports whether v, a value recovered from a panic, is the
// scheduler's signal that the run was stopped; code that recovers panics
// should re-panic it.
func IsAbort(v any) bool { return v == abortValue }

// run is the state of one controlled run, inside one synctest bubble.
type run struct {
	gen      uint64 // this run's number: state of controlled sync values is valid for one run
	cfg      Config
	strategy sched.Strategy
	caseRand *rand.Rand

	gs      []*gor
	alive   []*gor // the goroutines not done, in the order of their ids
	live    int
	cur     atomic.Pointer[gor]
	steps   int
	prog    atomic.Int64 // steps, for the coordinator's watch
	sum     uint64
	choices []sched.Choice
	streak  int
	last    *gor
	cand    []*gor
	ids     []int
	// The candidates of a choice (ready.go): the ids of the runnable
	// goroutines, of those blocked on a wait that can end and of those
	// whose select a counterpart completed, the cases
	// of the selects goroutines are blocked in, how many of them are
	// receives from a timer's channel, markReady's buffer, the
	// goroutines blocked on another wait.
	runnable, ready, selDone bitset
	probes                   []probe
	timerProbes              int
	maybe                    []int32
	others                   []*gor
	want                     []*gor // verifyCands's buffer

	events   chan struct{} // the holder found nobody to run: the coordinator takes over
	extRep   chan *gor
	aborting bool
	err      error
	mainDone bool
	hangGs   []*gor    // the goroutines of a hang (failHang)
	mainEnd  time.Time // virtual time when goroutine 0 returned
	initing  bool      // goroutine 0 runs the packages' initialisation: what it starts is a daemon
	// settleBeforeChoice: goroutines created in the process when the run
	// began, those the run created (controlled), whether any other was,
	// and how many goroutines the process has if none other was made
	// since the last settle (the controlled ones come and go).
	gcount   [1]metrics.Sample
	created0 uint64
	spawned  int
	foreign  bool
	living   int
	shadows  map[unsafe.Pointer]*shadow
	// extCases and extOwn are waitFirst's buffers, wake its timer
	// (external.go).
	extCases []reflect.SelectCase
	extOwn   []extOwner
	wake     *time.Timer
	launched []*gor // toLaunch's buffer
	// pool holds the bubble's free workers (gpool.go).
	pool *rtproc.Pool
	// holding: the goroutine holding control runs the external phase
	// itself (holderPhase); the coordinator's watch lets time pass.
	holding atomic.Bool

	// Adoptions: goroutines that the runtime starts for time.AfterFunc
	// callbacks of instrumented code ask to become controlled.
	adoptMu sync.Mutex
	adoptQ  []*adoption
	adoptCh chan struct{} // a doorbell, capacity 1
	ended   bool          // under adoptMu: late callbacks run uncontrolled
	adoptN  atomic.Int32  // len(adoptQ), read without the lock by every choice
	// afterFuncs counts the AfterFunc timers of the run not yet fired.
	afterFuncs atomic.Int64
	// afterTimers stand for the AfterFunc timers of the run among the
	// candidates of EarlyTimers (ops.go).
	afterTimers []*gor
	// tt: the test's own timers, the AfterFunc timers behind
	// afterTimers, the early phases (testtimers.go).
	tt testTimers
	// early sums the virtual time let pass while a goroutine could run
	// (timers.go); earlyFrom, if not zero, is when the current early
	// external phase began.
	early     atomic.Int64
	earlyFrom time.Time
	// earlyAll sums all of it, earlyHarness says the current phase had
	// only the harness's goroutines to hold back, and earlyAtMainEnd is
	// earlyAll when goroutine 0 returned (sinceMainEnd).
	earlyAll, earlyAtMainEnd time.Duration
	earlyHarness             bool
	// quiet > 0: the runtime's own code runs on the goroutine holding
	// control; the standard library's sync is not controlled (stdsync.go).
	quiet int

	// Housekeeping (housekeeping.go): steps of goroutines not woken by a
	// ticker, and when they last changed, in virtual time.
	progress, markProgress int
	markTime               time.Time

	// nowNs is the bubble's clock as now last read it, if nowOK.
	nowNs int64
	nowOK bool
	// legacy: the run replays a schedule of format version 1, made when
	// a loop that only yields yielded at every iteration and a spin on a
	// compare-and-swap spun (GoschedLoop, SpinCAS).
	legacy bool
}

// now returns the bubble's clock (time.Now().UnixNano()), read once
// between the instants at which it can move: it moves only while every
// goroutine of the bubble is blocked, so only while nobody holds control
// (the coordinator's wait, the external phase) or while the goroutine
// holding it is blocked outside the scheduler. Each choice (pick), each
// return of control to a goroutine (park) and each turn of the
// coordinator reads it afresh (timeMoved).
func (r *run) now() int64 {
	if r.nowOK {
		return r.nowNs
	}
	return r.readNow()
}

func (r *run) readNow() int64 {
	r.nowNs, r.nowOK = time.Now().UnixNano(), true
	return r.nowNs
}

// timeMoved says the clock may have moved since now was last read.
func (r *run) timeMoved() { r.nowOK = false }

type adoption struct {
	sem chan struct{}
	gp  uintptr
	g   *gor // set by the scheduler before it sends on sem; nil: run uncontrolled
}

// adopt makes the calling goroutine (a timer's callback) a controlled
// goroutine of r and runs f on it; it returns false if the run is over.
func (r *run) adopt(f func()) bool {
	a := &adoption{sem: make(chan struct{}, 1), gp: goid.Curg()}
	r.adoptMu.Lock()
	if r.ended {
		r.adoptMu.Unlock()
		return false
	}
	r.adoptQ = append(r.adoptQ, a)
	r.adoptN.Store(int32(len(r.adoptQ)))
	r.adoptMu.Unlock()
	select {
	case r.adoptCh <- struct{}{}:
	default:
	}
	<-a.sem
	g := a.g
	if g == nil {
		return false
	}
	var ret bool // not freed: the runtime's timer code waits for it
	defer r.exit(g, &ret)
	if r.aborting {
		return true
	}
	f()
	return true
}

// drainAdoptions registers the goroutines waiting to be adopted, in the
// order they asked; they are runnable.
func (r *run) drainAdoptions() {
	if r.adoptN.Load() == 0 {
		// None asked (it asks before it blocks, and settling waited for
		// it to block): the lock is not taken at every choice.
		return
	}
	r.quiet++ // the lock is the runtime's own (stdsync.go)
	r.adoptMu.Lock()
	q := r.adoptQ
	r.adoptQ = nil
	r.adoptN.Store(0)
	r.adoptMu.Unlock()
	r.quiet--
	for _, a := range q {
		g := r.newG()
		g.sem = a.sem
		g.gp.Store(a.gp)
		a.g = g
		r.mix(tagGo)
		r.mix(uint64(g.id))
	}
}

// endAdoptions lets late callbacks run uncontrolled.
func (r *run) endAdoptions() {
	r.adoptMu.Lock()
	r.ended = true
	q := r.adoptQ
	r.adoptQ = nil
	r.adoptN.Store(0)
	r.adoptMu.Unlock()
	for _, a := range q {
		a.sem <- struct{}{}
	}
}

// runs numbers the runs of the process.
var runs atomic.Uint64

// active is the run in progress (one at a time in a process).
var active atomic.Pointer[run]

// current returns the active run and the calling goroutine's record, or
// nil if the caller is not the controlled goroutine holding control.
func current() (*run, *gor) {
	r := active.Load()
	if r == nil {
		return nil, nil
	}
	g := r.cur.Load()
	if g == nil || g.gp.Load() != goid.Curg() {
		return r, nil
	}
	return r, g
}

// Checksum tags and operation codes.
const (
	tagStep = iota + 1
	tagGo
	tagExit
	tagCase
)

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func (r *run) mix(v uint64) { r.sum = (r.sum ^ v) * fnvPrime }

// EnvEarlyTimers set to 1 turns Config.EarlyTimers on for every run of
// the process (verify test --early-timers sets it for the test binary, so
// that the runs of rewritten TestXxx functions and their replays have it).
const EnvEarlyTimers = "EXECSPEC_EARLY_TIMERS"

var earlyFromEnv = os.Getenv(EnvEarlyTimers) == "1"

func newRun(cfg Config) *run {
	if earlyFromEnv {
		cfg.EarlyTimers = true
	}
	if cfg.Strategy == nil {
		cfg.Strategy = sched.Random(1)
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Fair <= 0 {
		cfg.Fair = DefaultFair
	}
	if cfg.Horizon <= 0 {
		cfg.Horizon = DefaultHorizon
	}
	if cfg.LeakAfter <= 0 {
		cfg.LeakAfter = DefaultLeakAfter
	}
	if cfg.Quiet <= 0 {
		cfg.Quiet = DefaultQuiet
	}
	r := &run{gen: runs.Add(1), cfg: cfg, strategy: cfg.Strategy, sum: fnvOffset, events: make(chan struct{}, 1), adoptCh: make(chan struct{}, 1),
		shadows: map[unsafe.Pointer]*shadow{}}
	if rp, ok := cfg.Strategy.(*sched.Replay); ok && rp.Version() == 1 {
		// A schedule made before format version 2 replays as its runs
		// chose: loops that only yield yield at every iteration, spins
		// spin (GoschedLoop, SpinCAS).
		r.legacy = true
	}
	if _, ok := cfg.Strategy.(*sched.PCT); ok {
		// PCT chooses goroutines by priority; the cases of a select are
		// chosen from a stream of their own.
		r.caseRand = rand.New(rand.NewPCG(cfg.Seed, 0x2545f4914f6cdd1d))
	}
	return r
}

// newG registers a new controlled goroutine; its sem is its worker's
// (launch) or its adoption's.
func (r *run) newG() *gor {
	g := &gor{id: len(r.gs)}
	r.gs = append(r.gs, g)
	r.alive = append(r.alive, g)
	r.live++
	r.setRunnable(g)
	return g
}

// start runs controlled goroutine g, whose function is fn, on its
// worker once g holds control; it reports whether the worker is free
// for another (gpool.go).
func (r *run) start(g *gor, fn func()) (free bool) {
	g.gp.Store(goid.Curg())
	g.fn = nil
	defer r.exit(g, &free)
	if r.aborting {
		return false
	}
	fn()
	return true
}

// exit runs when g's function returns, panics or calls runtime.Goexit.
// *ret says on entry whether the function returned, and on return
// whether g's worker went back to the free list.
func (r *run) exit(g *gor, ret *bool) {
	g.freed = *ret && !r.aborting && g.wk != nil && r.pool.Put(g.wk)
	*ret = g.freed
	if v := recover(); v != nil && !IsAbort(v) && !r.aborting {
		r.fail(&PanicError{G: g.id, Steps: r.steps, Value: v, Stack: debug.Stack()})
	}
	if !r.aborting {
		for _, f := range g.atExit {
			f()
		}
	}
	g.atExit = nil
	g.state = gDone
	r.unsetRunnable(g)
	r.live--
	if !g.freed {
		r.living-- // soon: it hands control over first
	}
	if i := slices.Index(r.alive, g); i >= 0 {
		r.alive = slices.Delete(r.alive, i, i+1)
	}
	if g.id == 0 {
		r.mainDone = true
		r.mainEnd, r.earlyAtMainEnd = time.Now(), r.earlyAll
	}
	var next *gor
	if !r.aborting {
		r.mix(tagExit)
		r.mix(uint64(g.id))
		if r.mainDone && r.onlyDaemons() {
			// The body and every goroutine it started are done: what is
			// left was started by the packages' initialisation (a default
			// pool's dispatcher). The run ends as a program does when
			// main returns; they are unwound, without a verdict.
			r.aborting = true
		} else if next = r.pick(g); next == nil {
			next = r.holderPhase()
		}
	}
	r.handTo(next)
}

// onlyDaemons reports whether every goroutine still alive is a daemon.
func (r *run) onlyDaemons() bool {
	for _, g := range r.alive {
		if !g.daemon {
			return false
		}
	}
	return true
}

// caseGoroutines returns the goroutines alive in state st (in any state
// but done if all), without the daemons once the body has returned: a
// leak is the body's, not the packages'.
func (r *run) caseGoroutines(st gstate, all bool) []*gor {
	var gs []*gor
	for _, g := range r.alive {
		if (all && g.state != gDone || g.state == st) && !(r.mainDone && g.daemon) {
			gs = append(gs, g)
		}
	}
	return gs
}

// handTo gives control to next, or to the coordinator if next is nil.
func (r *run) handTo(next *gor) {
	r.cur.Store(next)
	if next == nil {
		r.events <- struct{}{}
		return
	}
	next.sem <- struct{}{}
}

func (r *run) fail(err error) {
	if r.aborting {
		return
	}
	r.aborting = true
	r.err = err
	if h, ok := err.(*HangError); ok {
		stdUncontrolled(h) // now: unwinding the run may let them go on
	}
}

// step counts a yield point of g.
func (r *run) step(g *gor, op uint64) {
	if r.aborting {
		panic(abortValue)
	}
	r.steps++
	if !g.house {
		r.progress++
	}
	r.prog.Store(int64(r.steps))
	r.mix(tagStep)
	r.mix(uint64(g.id)<<8 | op)
	if r.steps > r.cfg.MaxSteps {
		r.fail(fmt.Errorf("%w: %d steps (goroutine %d)", sched.ErrBudget, r.cfg.MaxSteps, g.id))
		panic(abortValue)
	}
}

// yield is a yield point of g: another goroutine may run before it returns.
func (r *run) yield(g *gor, op uint64) {
	r.step(g, op)
	r.switchFrom(g, r.pick(g))
}

// block is a yield point that returns once w.ready() holds, or once the
// real operation w.sel.ext completed (it then returns true).
func (r *run) block(g *gor, op uint64, w wait) (ext bool) {
	r.step(g, op)
	g.state = gBlocked
	g.w = w
	g.extOK = false
	r.blocked(g)
	r.switchFrom(g, r.pick(g))
	r.unblocked(g)
	ext = g.extOK
	g.extOK = false
	g.w = wait{}
	return ext
}

func (r *run) switchFrom(g, next *gor) {
	if next == nil {
		next = r.holderPhase()
	}
	if next == g {
		return
	}
	r.handTo(next)
	r.park(g)
}

// park waits until g is given control again. Meanwhile the coordinator may
// ask g to perform its operation for real (the external phase).
func (r *run) park(g *gor) {
	for {
		<-g.sem
		if r.aborting {
			if r.err != nil {
				// For the report of a hang; not when the run ended
				// well and only its daemons are unwound.
				g.stack = debug.Stack()
			}
			panic(abortValue)
		}
		if g.extReq {
			g.extReq = false
			g.extOK = g.w.sel.ext(g.cancel)
			r.extRep <- g
			continue
		}
		r.timeMoved()
		return
	}
}

// settle lets every uncontrolled goroutine of the bubble run until it is
// durably blocked, so that what a choice sees does not depend on timing.
func settle() {
	settles.Add(1) // odd: under way, for the watchdog (settlewatch.go)
	synctest.Wait()
	settles.Add(1)
}

// alwaysSettle turns the fast path of settleBeforeChoice off (tests).
var alwaysSettle bool

// settleBeforeChoice is settle before a choice, skipped when the run
// knows that no uncontrolled goroutine can be runnable: no goroutine was
// created in the process since the run began but the run's own
// controlled ones. That is decided in two steps. The cheap one, at each
// choice: the process has as many goroutines as at the last settle, give
// or take the controlled goroutines started and ended since
// (runtime.NumGoroutine, a few loads without a lock). If it has not, the
// run settles and reads the runtime's count of goroutines created,
// which exits do not blur: one created by code that is not rewritten, a
// timer's callback, an uncontrolled goroutine's child makes the run
// settle before every choice from then on; otherwise the difference was
// a controlled goroutine on its way out (its exit hands control over
// before it ends), and the number is taken again. What neither
// sees: a goroutine that was there, durably blocked, when the run began
// and that a controlled goroutine wakes by a real operation (a channel
// it shares with code left from an earlier run: every package that is
// rewritten starts each run afresh, pkginit.go, so the run's goroutines
// share nothing with such leftovers unless a package that is not
// instrumented carries it), and, for the cheap step, a goroutine created
// in the same stretch as one of the process's ended elsewhere (outside
// the run's goroutines) — or created and ended within it, which left
// nothing runnable. synctest.Wait takes the bubble's lock and parks the
// caller until every other goroutine of the bubble is blocked; reading
// the count of goroutines created takes the scheduler's lock and costs
// about as much as a step.
func (r *run) settleBeforeChoice(g *gor) {
	if !alwaysSettle && !r.foreign && runtime.NumGoroutine() == r.living {
		skippedSettles.Add(1)
		return
	}
	settle()
	if alwaysSettle || r.foreign {
		return
	}
	if r.created()-r.created0 != uint64(r.spawned) {
		r.foreign = true
		return
	}
	r.living = runtime.NumGoroutine()
	if g.state == gDone && !g.freed {
		r.living-- // g itself, which is about to end
	}
}

// created returns how many goroutines the process has created.
// Without the metric (Go 1.25 has none) the run always settles.
func (r *run) created() uint64 {
	metrics.Read(r.gcount[:])
	if r.gcount[0].Value.Kind() != metrics.KindUint64 {
		r.foreign = true
		return 0
	}
	return r.gcount[0].Value.Uint64()
}

// skippedSettles counts the settles the fast path skipped (tests).
var skippedSettles atomic.Int64

// pick chooses who runs after g reached a yield point or returned; nil
// means nobody can: the coordinator takes over.
func (r *run) pick(g *gor) *gor {
	if r.aborting {
		return nil
	}
	r.timeMoved()
	r.settleBeforeChoice(g)
	r.drainAdoptions()
	r.markReady()
	cands := r.cand[:0]
	curRunnable := false
	if r.canRun(g) {
		if r.initing {
			// The packages' initialisation runs to its end before
			// anything it started (pkginit.go): it makes no decisions,
			// so the schedule and its shrinking are the body's.
			return g
		}
		cands = append(cands, g)
		curRunnable = true
	}
	if others := r.appendCands(cands, g); checkReady {
		r.verifyCands(g, others[len(cands):])
		cands = others
	} else {
		cands = others
	}
	if len(cands) == 0 {
		r.cand = cands
		return nil
	}
	if r.cfg.EarlyTimers && timersReadable {
		cands = r.timerCand(cands)
	}
	r.cand = cands
	next := r.choose(g, curRunnable, cands)
	if next == nil {
		return nil
	}
	if next.state == gBlocked && !r.isReady(&next.w) {
		r.markEarly()
		return nil // time passes: the coordinator takes over
	}
	r.setRunnable(next)
	return next
}

func (r *run) choose(g *gor, curRunnable bool, cands []*gor) *gor {
	var next *gor
	switch {
	case len(cands) == 1:
		next = cands[0]
	case curRunnable && r.last == g && r.streak >= r.cfg.Fair:
		// The fairness bound: a deterministic switch, not a decision.
		next = cands[1]
	default:
		ids := r.ids[:0]
		for _, h := range cands {
			ids = append(ids, h.id)
		}
		r.ids = ids
		i := r.decide(sched.Decision{N: len(r.choices), Step: r.steps, Current: g.id,
			Point: point.None, CurrentRunnable: curRunnable, Runnable: ids})
		if i < 0 {
			return nil
		}
		r.choices = append(r.choices, sched.Choice{Index: i, Of: len(ids), Preempt: curRunnable && i != 0})
		next = cands[i]
	}
	if next == r.last && len(cands) > 1 {
		r.streak++
	} else {
		r.streak = 0
	}
	r.last = next
	return next
}

// decide asks the Strategy; a bad choice stops the run.
func (r *run) decide(d sched.Decision) int {
	i := r.strategy.Choose(d)
	if i < 0 || i >= len(d.Runnable) {
		var why error
		if e, ok := r.strategy.(interface{ Err() error }); ok {
			why = e.Err()
		}
		if why == nil {
			why = fmt.Errorf("%w: choice %d of %d at decision %d", sched.ErrStrategy, i, len(d.Runnable), d.N)
		}
		r.fail(why)
		return -1
	}
	return i
}

// pickCase chooses one of n ready cases of a select of g, as Go chooses
// uniformly; the choice is part of the schedule.
func (r *run) pickCase(g *gor, n int) int {
	var i int
	if r.caseRand != nil {
		i = r.caseRand.IntN(n)
	} else {
		ids := r.ids[:0]
		for range n {
			ids = append(ids, g.id)
		}
		r.ids = ids
		i = r.decide(sched.Decision{N: len(r.choices), Step: r.steps, Current: g.id, CurrentRunnable: true, Runnable: ids})
		if i < 0 {
			panic(abortValue)
		}
	}
	r.choices = append(r.choices, sched.Choice{Index: i, Of: n})
	r.mix(tagCase)
	r.mix(uint64(i))
	return i
}

// coordinate is the bubble's root goroutine: it starts goroutine 0, takes
// over whenever nobody can run (the external phase: the blocked goroutines
// perform their operations for real, so timers and uncontrolled
// goroutines can end them), decides deadlocks and leaks, and unwinds the
// goroutines of a stopped run one at a time.
func (r *run) coordinate(main func()) error {
	defer HoldOneProc()() // a run runs on one P (rtproc.HoldOneProc)
	r.gcount[0].Name = "/sched/goroutines-created:goroutines"
	r.created0 = r.created()
	r.living = runtime.NumGoroutine()
	g0 := r.newG()
	r.launch(g0, main)
	r.cur.Store(g0)
	g0.sem <- struct{}{}
	watch := time.NewTimer(r.cfg.Horizon)
	defer watch.Stop()
	lastProg := int64(-1)
	for {
		select {
		case <-r.events:
		case <-watch.C:
			// Virtual time passed while the goroutine holding control
			// was blocked outside the scheduler.
			if p := r.prog.Load(); p != lastProg || r.holding.Load() {
				lastProg = p
				watch.Reset(r.cfg.Horizon)
				continue
			}
			g := r.cur.Load()
			panic(fmt.Sprintf("execspec/rt: controlled goroutine %d blocked outside the scheduler (in code that is not instrumented) for %v of virtual time; all goroutines:\n%s", g.id, r.cfg.Horizon, rtreport.AllStacks()))
		}
		r.timeMoved()
		if r.aborting {
			if next := r.firstLive(); next != nil {
				r.handTo(next)
				continue
			}
			break
		}
		if r.live == 0 {
			break
		}
		next := r.external()
		r.endEarly()
		if next == nil && r.aborting {
			continue // a bad choice in external
		}
		r.handTo(r.afterPhase(next))
	}
	r.endAdoptions()
	if h, ok := r.err.(*HangError); ok {
		fillHang(h, r.hangGs)
	}
	return r.err
}

// afterPhase decides, after an external phase that chose next (nil: it
// woke nobody within the horizon), whom control goes to: next, or the
// first goroutine to unwind when the run is over: a hang, a leak (still
// going long after the body returned) or housekeeping alone
// (housekeeping.go).
func (r *run) afterPhase(next *gor) *gor {
	switch {
	case next == nil:
		// Nobody can run, nobody was woken within the horizon.
		r.failHang(&HangError{Leak: r.mainDone, Steps: r.steps}, r.caseGoroutines(gBlocked, false))
	case r.mainDone && r.sinceMainEnd() > r.cfg.LeakAfter:
		// Still going (sleeping, waking) long after the body
		// returned: leaked, though not blocked for good.
		r.failHang(&HangError{Leak: true, Steps: r.steps}, r.caseGoroutines(0, true))
	case r.housekeepingOnly():
		r.failHang(r.housekeepingHang())
	default:
		return next
	}
	return r.firstLive()
}

// waitAdoption reports whether a timer callback may still come to be
// adopted: some AfterFunc of instrumented code is pending. It is not
// known without the runtime's timers, so the external phase waits for one
// within the horizon whenever it would otherwise give up at once.
func (r *run) waitAdoption() bool { return r.afterFuncs.Load() > 0 }

func (r *run) firstLive() *gor {
	for _, g := range r.alive {
		if g.state != gDone {
			return g
		}
	}
	return nil
}

// external runs when no controlled goroutine can run. Each goroutine
// blocked on a channel performs its operation for real, in the order of
// goroutine ids; once one completes (a timer fired, an uncontrolled
// goroutine sent), the others are cancelled and the completed ones become
// runnable. It returns the goroutine to run, or nil if none completed
// within the horizon.
func (r *run) external() *gor {
	launched := r.toLaunch()
	if len(launched) == 0 && !r.waitAdoption() && !r.stdWaits(false) {
		return nil
	}
	if r.waitFirst(launched) {
		return r.afterExternal(launched)
	}
	r.extRep = make(chan *gor, len(launched)+1)
	for _, g := range launched {
		g.extReq = true
		g.cancel = make(chan struct{})
		g.sem <- struct{}{}
		settle() // g is now in its real operation, or done with it
	}
	horizon := time.NewTimer(r.cfg.Horizon)
	poll := r.newStdPoll()
	reported := 0
	var woken []*gor
	note := func(g *gor) {
		reported++
		if g.extOK {
			woken = append(woken, g)
		}
	}
	for timedOut := false; !timedOut; {
		select {
		case g := <-r.extRep:
			note(g)
		case <-r.adoptCh:
		case <-poll.c():
		case <-horizon.C:
			timedOut = true
		}
		settle()
		r.timeMoved()
	drain:
		for {
			select {
			case g := <-r.extRep:
				note(g)
			default:
				break drain
			}
		}
		r.adoptMu.Lock()
		adopted := len(r.adoptQ) > 0
		r.adoptMu.Unlock()
		if len(woken) > 0 || adopted || r.stdWaits(true) {
			break
		}
		poll.again()
	}
	horizon.Stop()
	poll.stop()
	for _, g := range launched {
		close(g.cancel)
	}
	for reported < len(launched) {
		note(<-r.extRep)
	}
	return r.afterExternal(launched)
}

// toLaunch returns the goroutines whose operations an external phase
// performs for real: those blocked in a select (a plain send or receive
// is one), not those whose operation can complete under control (the
// schedule let time pass while they could run, EarlyTimers): done for
// real, it could complete with another's at random.
func (r *run) toLaunch() []*gor {
	launched := r.launched[:0]
	for _, g := range r.alive {
		if g.state == gBlocked && g.w.sel != nil && !r.isReady(&g.w) {
			launched = append(launched, g)
		}
	}
	r.launched = launched
	return launched
}

// afterExternal ends an external phase: the goroutines whose real
// operation completed are runnable, and the next to run is chosen.
func (r *run) afterExternal(launched []*gor) *gor {
	// Deterministic order: by goroutine id.
	for _, g := range launched {
		if g.extOK {
			r.setRunnable(g)
			g.house = g.w.tick
		}
	}
	settle()
	r.timeMoved()
	r.drainAdoptions()
	var cands []*gor
	for _, g := range r.alive {
		if r.canRun(g) {
			cands = append(cands, g)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	next := r.choose(cands[0], false, cands)
	if next != nil {
		r.setRunnable(next)
	}
	return next
}

// The reports of a failed run (package rtreport), under rt's names.
type (
	PanicError = rtreport.PanicError
	Blocked    = rtreport.Blocked
	HangError  = rtreport.HangError
)

// ErrDeadlock and ErrLeak are matched by errors.Is on a *HangError.
var (
	ErrDeadlock = rtreport.ErrDeadlock
	ErrLeak     = rtreport.ErrLeak
)

// Uncontrolled is Blocked.G of a goroutine that does not hold control
// (started by code that was not rewritten).
const Uncontrolled = rtreport.Uncontrolled

// failHang stops the run with h, a hang of the goroutines gs, named in h
// once the run is unwound (fillHang).
func (r *run) failHang(h *HangError, gs []*gor) {
	if !r.aborting {
		r.hangGs = gs
	}
	r.fail(h)
}

// fillHang names in h, before the goroutines that do not hold control,
// the goroutines gs with their operation and their stack, taken as they
// were unwound.
func fillHang(h *HangError, gs []*gor) {
	uncontrolled := h.Blocked
	h.Blocked = nil
	for _, g := range gs {
		st := string(g.stack)
		op := g.w.op
		if op == "" {
			op = "running"
		}
		h.Blocked = append(h.Blocked, Blocked{G: g.id, Op: op, Where: rtreport.Where(st), Stack: st})
	}
	h.Blocked = append(h.Blocked, uncontrolled...)
}

// ReplayWith is Replay for runs made with cfg (EarlyTimers, budgets): the
// replay must run as the search did. cfg's Strategy is replaced by s's
// choices.
func ReplayWith(t *testing.T, cfg Config, s sched.Schedule, body func(t *testing.T)) error {
	t.Helper()
	rp := sched.NewReplay(s)
	cfg.Strategy = rp
	got, err := Run(t, cfg, body)
	if derr := rp.Check(got); derr != nil {
		return derr
	}
	return err
}
