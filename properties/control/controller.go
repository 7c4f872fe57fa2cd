package control

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/execspec/execspec/executor/point"
	"github.com/execspec/execspec/properties/control/sched"
)

// Config sets the budgets of a Controller. The zero Config works: it means
// DefaultMaxSteps and DefaultStall.
type Config struct {
	// MaxSteps bounds the yield points of one run; a run that reaches it is
	// stopped and Run returns an error that wraps ErrBudget (the verdict is
	// unknown, not a failure of the program).
	MaxSteps int
	// Stall is how long Run waits for a controlled goroutine to reach its
	// next yield point before it gives up with a *StallError. A stall means
	// a controlled goroutine blocked on something the Controller does not
	// see (a real channel, a sync.Mutex): under control, every wait must go
	// through Block. A negative Stall waits forever.
	Stall time.Duration
}

// Defaults for the zero Config.
const (
	DefaultMaxSteps = 100_000
	DefaultStall    = 10 * time.Second
)

type gstate uint8

const (
	gRunnable gstate = iota // may run: waiting for its turn, or running
	gBlocked                // in Block, runnable once ready() holds
	gDone                   // its function returned (or was unwound)
)

// gor is one controlled goroutine. Its fields are touched only by the
// goroutine that holds control (the one running, or the one handing over),
// so they need no lock: every handover is a channel operation, which orders
// the memory of the two goroutines.
type gor struct {
	id    int
	sem   chan struct{} // capacity 1: a send gives this goroutine control
	state gstate
	point point.Point
	ready func() bool
}

// abortSignal is the panic value that unwinds a controlled goroutine when a
// run is stopped (deadlock, budget, panic elsewhere). It is recovered by the
// wrapper that Go and Run put around every controlled function.
type abortSignal struct{}

var errAbortValue = &abortSignal{}

// IsAbort reports whether v, a value recovered from a panic, is the
// Controller's signal that the run was stopped. An executor that recovers
// panics (from the futures it polls) should re-panic such a value, so that
// its goroutine unwinds at once (if it does not, every later yield point of
// the goroutine panics again, so it unwinds at the next one outside the
// recover):
//
//	if r := recover(); r != nil {
//		if control.IsAbort(r) {
//			panic(r)
//		}
//		...
//	}
func IsAbort(v any) bool { return v == any(errAbortValue) }

// Controller runs controlled goroutines one at a time and chooses, at each
// yield point, which one runs next. It implements executor.Scheduler.
//
// Exactly one controlled goroutine holds control at any moment; it gives
// control away only in Yield, Block or by returning. The goroutine giving
// control away evaluates the ready predicates of blocked goroutines, asks the
// Strategy, and hands control to the chosen goroutine through that
// goroutine's channel (one channel operation per switch; none when the same
// goroutine continues). So ready predicates run while no controlled goroutine
// runs the program's code, one at a time, in a fixed order.
//
// Cost: a switch between goroutines costs one channel handover (about
// 200-400ns); a yield point that keeps the same goroutine costs the
// evaluation of the ready predicates and the Strategy's choice. Steps do not
// allocate; a run allocates its goroutines.
//
// A Controller runs one program at a time (Run is not reentrant) and may be
// reused for many runs. Go, Yield, Block and Note are for controlled
// goroutines only. The zero Controller is not usable; call New.
type Controller struct {
	strategy Strategy
	cfg      Config

	// State of the current run, owned by the goroutine holding control.
	gs        []*gor
	live      int
	cur       *gor
	steps     int
	sum       uint64
	choices   []Choice
	candG     []*gor
	candIDs   []int
	aborting  bool
	err       error
	stratPan  any
	stratPnc  bool
	done      chan struct{}
	recycle   []*gor // gor values of earlier clean runs, with their channels
	broken    error  // set by a stall
	lastSteps int

	// progress is steps<<16 | goroutine<<8 | point of the last yield point,
	// for the stall watchdog, which reads it from Run's goroutine.
	progress atomic.Uint64
	running  atomic.Bool
	timer    *time.Timer
}

// New returns a Controller that takes its choices from s, with the zero
// Config.
func New(s Strategy) *Controller { return NewWith(s, Config{}) }

// NewWith returns a Controller that takes its choices from s.
func NewWith(s Strategy, cfg Config) *Controller {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Stall == 0 {
		cfg.Stall = DefaultStall
	}
	return &Controller{strategy: s, cfg: cfg}
}

// SetStrategy replaces the Strategy for the next runs. Not while Run runs.
func (c *Controller) SetStrategy(s Strategy) { c.strategy = s }

// Strategy returns the current Strategy.
func (c *Controller) Strategy() Strategy { return c.strategy }

// Errors of Run.
var (
	// ErrBusy is returned by Run when another Run is in progress.
	ErrBusy = errors.New("control: Run called while another run is in progress")
)

// BlockedGoroutine is one goroutine found blocked in a deadlock.
type BlockedGoroutine struct {
	G     int
	Point point.Point
}

// DeadlockError is a run in which no goroutine could run while some were
// blocked. Blocked lists them, with the point of their Block call.
type DeadlockError struct {
	Steps   int
	Blocked []BlockedGoroutine
}

func (e *DeadlockError) Error() string {
	s := fmt.Sprintf("control: deadlock after %d steps: no goroutine can run;", e.Steps)
	for i, b := range e.Blocked {
		if i > 0 {
			s += ","
		}
		if b.Point == point.None {
			// A wait with no yield point of its own (a Wait for the tasks,
			// a join): "blocked at none" said nothing.
			s += fmt.Sprintf(" goroutine %d waiting (not at a yield point)", b.G)
			continue
		}
		s += fmt.Sprintf(" goroutine %d blocked at %s", b.G, PointName(b.Point))
	}
	return s
}

// PanicError is a panic in a controlled goroutine, with its stack.
type PanicError struct {
	G     int
	Steps int
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("control: goroutine %d panicked after %d steps: %v", e.G, e.Steps, e.Value)
}

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// StallError is a run in which the goroutine holding control did not reach
// a yield point within Config.Stall: it blocked outside the Controller. Its
// goroutines cannot be released and are leaked.
type StallError struct {
	G     int
	Point point.Point // the last yield point it passed
	Steps int
	After time.Duration
}

func (e *StallError) Error() string {
	return fmt.Sprintf("control: goroutine %d ran for %v after step %d (%s) without reaching a yield point: it is blocked outside the controller", e.G, e.After, e.Steps, PointName(e.Point))
}

// PointName names a yield point for messages.
func PointName(p point.Point) string {
	switch p {
	case point.None:
		return "none"
	case point.Push:
		return "push"
	case point.Pop:
		return "pop"
	case point.Steal:
		return "steal"
	case point.Wake:
		return "wake"
	case point.Park:
		return "park"
	case point.Poll:
		return "poll"
	case point.Lock:
		return "lock"
	case point.Spawn:
		return "spawn"
	case point.Register:
		return "register"
	}
	return fmt.Sprintf("point(%d)", p)
}

// Checksum event tags, mixed before each event's fields.
const (
	tagStep = iota + 1
	tagGo
	tagExit
	tagNote
)

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// mix folds v into the checksum: FNV-1a over 64-bit words.
func (c *Controller) mix(v uint64) {
	c.sum = (c.sum ^ v) * fnvPrime
}

// Run runs main as controlled goroutine 0 and returns when every controlled
// goroutine has returned. It returns nil, or the first of: a *DeadlockError,
// a *PanicError, an error wrapping ErrBudget or ErrStrategy, a *StallError.
// Goroutines still blocked when every other goroutine has returned (say,
// workers parked because the program never closed its executor) are a
// deadlock too: a run ends only when all its goroutines have.
// When a run is stopped early, every controlled goroutine is unwound (see
// IsAbort), one at a time, before Run returns; only a stall leaks them.
//
// If the Strategy panics (as a rapid draw does when rapid shrinks), the run
// is stopped and Run re-panics the value on its caller's goroutine.
func (c *Controller) Run(main func()) error {
	if !c.running.CompareAndSwap(false, true) {
		return ErrBusy
	}
	defer c.running.Store(false)
	if c.broken != nil {
		return fmt.Errorf("control: this Controller cannot run again after %w", c.broken)
	}
	c.reset()
	if b, ok := c.strategy.(interface{ Begin() }); ok {
		b.Begin()
	}
	g := c.newG()
	c.cur = g
	c.progress.Store(0)
	done := c.done
	go c.start(g, main)
	g.sem <- struct{}{}
	if err := c.wait(done); err != nil {
		// The stalled goroutine may still wake up and believe it holds
		// control, so this Controller is never used again.
		c.broken = err
		return err
	}
	c.lastSteps = c.steps
	if e, ok := c.strategy.(interface{ End(steps int) }); ok {
		e.End(c.steps)
	}
	if c.stratPnc {
		v := c.stratPan
		c.stratPan, c.stratPnc = nil, false
		panic(v)
	}
	return c.err
}

func (c *Controller) wait(done chan struct{}) error {
	if c.cfg.Stall < 0 {
		<-done
		return nil
	}
	if c.timer == nil {
		c.timer = time.NewTimer(c.cfg.Stall)
	} else {
		c.timer.Reset(c.cfg.Stall)
	}
	last := c.progress.Load()
	for {
		select {
		case <-done:
			c.timer.Stop()
			return nil
		case <-c.timer.C:
			now := c.progress.Load()
			if now == last {
				return &StallError{G: int(now>>8) & 0xff, Point: point.Point(now), Steps: int(now >> 16), After: c.cfg.Stall}
			}
			last = now
			c.timer.Reset(c.cfg.Stall)
		}
	}
}

func (c *Controller) reset() {
	// Goroutine records of the last run are reused when it ended cleanly:
	// every goroutine returned, so none still reads its channel.
	for _, g := range c.gs {
		if len(g.sem) == 0 {
			c.recycle = append(c.recycle, g)
		}
	}
	clear(c.gs)
	c.gs = c.gs[:0]
	c.live = 0
	c.steps = 0
	c.sum = fnvOffset
	c.choices = c.choices[:0]
	c.aborting = false
	c.err = nil
	c.stratPan, c.stratPnc = nil, false
	c.done = make(chan struct{})
}

func (c *Controller) newG() *gor {
	var g *gor
	if n := len(c.recycle); n > 0 {
		g = c.recycle[n-1]
		c.recycle = c.recycle[:n-1]
		*g = gor{sem: g.sem}
	} else {
		g = &gor{sem: make(chan struct{}, 1)}
	}
	g.id = len(c.gs)
	c.gs = append(c.gs, g)
	c.live++
	return g
}

// Go starts fn on a new controlled goroutine. The new goroutine is runnable
// but does not run until the Controller chooses it at a later yield point;
// Go itself is not a yield point. Go may be called only by a controlled
// goroutine.
func (c *Controller) Go(fn func()) {
	c.mustHold("Go")
	if c.aborting {
		panic(errAbortValue)
	}
	g := c.newG()
	c.mix(tagGo)
	c.mix(uint64(c.cur.id)<<32 | uint64(g.id))
	go c.start(g, fn)
}

func (c *Controller) mustHold(op string) {
	if !c.running.Load() || c.cur == nil {
		panic("control: " + op + " called outside Controller.Run")
	}
}

// start is the body of every controlled goroutine: wait for control, run fn,
// and hand control on when fn returns or unwinds.
func (c *Controller) start(g *gor, fn func()) {
	<-g.sem
	defer c.exit(g)
	if c.aborting {
		return
	}
	fn()
}

// exit runs when g's function returns or panics. g holds control; it marks
// itself done and hands control to the next goroutine, or ends the run.
func (c *Controller) exit(g *gor) {
	if r := recover(); r != nil && !IsAbort(r) && !c.aborting {
		c.abort(&PanicError{G: g.id, Steps: c.steps, Value: r, Stack: debug.Stack()})
	}
	g.state = gDone
	g.ready = nil
	c.live--
	if !c.aborting {
		c.mix(tagExit)
		c.mix(uint64(g.id))
	}
	var next *gor
	if c.aborting {
		next = c.nextToRelease()
	} else {
		next = c.schedule(g)
		if c.aborting {
			next = c.nextToRelease()
		}
	}
	if next == nil {
		c.cur = nil
		close(c.done)
		return
	}
	c.cur = next
	next.sem <- struct{}{}
}

// nextToRelease returns the first goroutine not done, in the order of
// creation, or nil. While a run is aborting, control passes through every
// live goroutine in turn; each unwinds (abortSignal) and passes it on, so
// the unwinding, deferred calls included, is still one goroutine at a time.
func (c *Controller) nextToRelease() *gor {
	for _, h := range c.gs {
		if h.state != gDone {
			return h
		}
	}
	return nil
}

func (c *Controller) abort(err error) {
	if c.aborting {
		return
	}
	c.aborting = true
	c.err = err
}

// enter records a step of the current goroutine at point p.
func (c *Controller) enter(op string, p point.Point) *gor {
	c.mustHold(op)
	g := c.cur
	if c.aborting {
		panic(errAbortValue)
	}
	c.steps++
	c.mix(tagStep)
	c.mix(uint64(g.id)<<8 | uint64(p))
	c.progress.Store(uint64(c.steps)<<16 | uint64(g.id&0xff)<<8 | uint64(p))
	g.point = p
	if c.steps > c.cfg.MaxSteps {
		c.abort(fmt.Errorf("%w: %d steps (goroutine %d at %s)", ErrBudget, c.cfg.MaxSteps, g.id, PointName(p)))
		panic(errAbortValue)
	}
	return g
}

// Yield is a yield point: the Controller may run other goroutines before it
// returns. Only a controlled goroutine may call it.
func (c *Controller) Yield(p point.Point) {
	g := c.enter("Yield", p)
	next := c.schedule(g)
	c.switchTo(g, next)
}

// Block is a yield point that returns only once ready() is true. ready is
// called by the Controller while no controlled goroutine runs the program,
// so it may read shared state without locks; it must not block, call back
// into the Controller, or have effects. If no goroutine can run and some are
// blocked, the run is a deadlock: Run reports it, and the blocked goroutines
// are unwound (Block panics with the abort signal, see IsAbort).
func (c *Controller) Block(p point.Point, ready func() bool) {
	g := c.enter("Block", p)
	g.state = gBlocked
	g.ready = ready
	next := c.schedule(g)
	c.switchTo(g, next)
}

func (c *Controller) switchTo(g, next *gor) {
	if c.aborting {
		panic(errAbortValue)
	}
	if next != g {
		c.cur = next
		next.sem <- struct{}{}
		<-g.sem
		if c.aborting {
			panic(errAbortValue)
		}
	}
}

// Note mixes v into the checksum of the run, so that replay also proves
// that the program observed the same things (the events an executor
// recorded, the values a workload saw). Only a controlled goroutine may call
// it.
func (c *Controller) Note(v uint64) {
	c.mustHold("Note")
	c.mix(tagNote)
	c.mix(v)
}

// Steps returns the number of yield points of the last run.
func (c *Controller) Steps() int {
	if c.running.Load() {
		return c.steps
	}
	return c.lastSteps
}

// schedule chooses the goroutine that runs after cur reached a yield point
// or returned. It returns nil when every goroutine is done. On a deadlock or
// a failed choice it sets aborting.
func (c *Controller) schedule(cur *gor) *gor {
	cands := c.candG[:0]
	curRunnable := false
	if cur.state == gRunnable || (cur.state == gBlocked && cur.ready()) {
		cands = append(cands, cur)
		curRunnable = true
	}
	for _, h := range c.gs {
		if h == cur || h.state == gDone {
			continue
		}
		if h.state == gRunnable || h.ready() {
			cands = append(cands, h)
		}
	}
	c.candG = cands
	var next *gor
	switch len(cands) {
	case 0:
		if c.live == 0 {
			return nil
		}
		d := &DeadlockError{Steps: c.steps}
		for _, h := range c.gs {
			if h.state == gBlocked {
				d.Blocked = append(d.Blocked, BlockedGoroutine{G: h.id, Point: h.point})
			}
		}
		c.abort(d)
		return nil
	case 1:
		next = cands[0]
	default:
		i, ok := c.choose(cur, curRunnable, cands)
		if !ok {
			return nil
		}
		next = cands[i]
	}
	if next.state == gBlocked {
		next.state = gRunnable
		next.ready = nil
	}
	return next
}

func (c *Controller) choose(cur *gor, curRunnable bool, cands []*gor) (idx int, ok bool) {
	ids := c.candIDs[:0]
	for _, h := range cands {
		ids = append(ids, h.id)
	}
	c.candIDs = ids
	d := Decision{
		N:               len(c.choices),
		Step:            c.steps,
		Current:         cur.id,
		Point:           sched.Point(cur.point),
		CurrentRunnable: curRunnable,
		Runnable:        ids,
	}
	defer func() {
		if r := recover(); r != nil {
			c.stratPan, c.stratPnc = r, true
			c.abort(fmt.Errorf("%w: the strategy panicked: %v", ErrStrategy, r))
			ok = false
		}
	}()
	i := c.strategy.Choose(d)
	if i < 0 || i >= len(ids) {
		var why error
		if e, ok := c.strategy.(interface{ Err() error }); ok {
			why = e.Err()
		}
		if why == nil {
			why = fmt.Errorf("%w: choice %d of %d at decision %d", ErrStrategy, i, len(ids), d.N)
		}
		c.abort(why)
		return 0, false
	}
	c.choices = append(c.choices, Choice{Index: i, Of: len(ids), Preempt: curRunnable && i != 0})
	return i, true
}

// Schedule returns the decisions and checksum of the last run (of the
// current one, if called from inside it). It can be saved and replayed.
func (c *Controller) Schedule() Schedule {
	return Schedule{
		Choices:  append([]Choice(nil), c.choices...),
		Steps:    c.steps,
		Checksum: c.sum,
	}
}

// Replay runs main under the choices of s and checks that the run followed
// them and produced the same checksum and number of steps. It returns an
// error wrapping ErrDiverged if not; otherwise the run's own result (nil,
// or the deadlock or panic that s recorded). The Controller's Strategy is
// restored afterwards.
func (c *Controller) Replay(main func(), s Schedule) error {
	old := c.strategy
	r := NewReplay(s)
	c.strategy = r
	defer func() { c.strategy = old }()
	err := c.Run(main)
	if err := r.Err(); err != nil {
		return err
	}
	if r.Used() != len(s.Choices) {
		return fmt.Errorf("%w: the run ended after %d of the schedule's %d choices", ErrDiverged, r.Used(), len(s.Choices))
	}
	if c.steps != s.Steps || c.sum != s.Checksum {
		return fmt.Errorf("%w: %d steps, checksum %016x; the schedule recorded %d steps, checksum %016x", ErrDiverged, c.steps, c.sum, s.Steps, s.Checksum)
	}
	return err
}
