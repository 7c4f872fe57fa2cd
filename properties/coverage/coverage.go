package coverage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/execspec/execspec/checker/cover"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/properties/internal/onengine"
	"github.com/execspec/execspec/traces"
)

// Spec coverage of a controllable executor: runs of the workload of a
// closed model configuration under controlled interleavings, each run's
// trace projected onto the closed model (cover.Coverage).
//
// The workload is the configuration's: Tasks tasks spawned in order from
// outside; each future returns Pending Pendings times, then Ready; each
// Pending poll registers its waker with Context.Register (the executor
// records the register event and yields, so a wake can land before the
// Pending return), and the registration is woken Wakes times. Who wakes a
// registration is part of the run: the task's own event source (a
// controlled goroutine outside the workers: a wake onto the global queue)
// or another task's poll on a worker (a wake onto that worker's local
// queue), as the workload's draws decide.

// Config configures Run. The zero value covers the work-stealing
// executor on the reference configuration (2 workers, 3 tasks, one Pending
// each, one wake per registration, local capacity 2) with random schedules
// for 10 seconds.
type Config struct {
	// Executor names a built-in executor (Executors); "" means
	// worksteal. New, when set, is used instead: any executor that is
	// executor.Controllable, executor.Reporter and executor.Describer; its
	// header says the policy and its parameters.
	Executor string
	New      func() executor.Executor
	// Model is the closed configuration: for a built-in executor its
	// workers and local capacity; for every executor the workload (Tasks,
	// Pendings, Wakes). Zero fields take the defaults above.
	Model model.Config
	// Strategy: "random" (default), "pct", "guided", "exhaustive" or
	// "dfs" (see Strategies).
	Strategy string
	PCTDepth int    // for pct; 0 means 3
	Seed     uint64 // 0 means 1
	// Preemptions, for exhaustive and dfs, bounds the preemptions of each
	// run (0: no bound).
	Preemptions int

	// Budgets: stop after Runs runs or after Time, whichever first; 0
	// means none (Time defaults to 10 s when both are 0). Cancelling the
	// context stops too. Goal stops once the visited share of the states
	// the executor can reach is at least Goal percent (0: none).
	Runs int
	Time time.Duration
	Goal float64
	// StopAtFailure stops at the first failing run.
	StopAtFailure bool

	// Progress, if set, is called about once a second.
	Progress func(Progress)

	// T, when set in a test binary that runs under the instrumented
	// engine (properties.UnderEngine), runs each run on the engine, as a controlled
	// run of instrument/rt in a synctest bubble of T, with the executor's
	// Scheduler hook unused: its instrumented goroutines, channels, locks
	// and atomics are the yield points (the executor need not be
	// executor.Controllable). Otherwise runs are on a control.Controller,
	// through the hook. `verify cover --no-hook` runs it so, in a
	// test binary it builds (Job).
	T *testing.T
}

// Progress is a snapshot of a running Run.
type Progress struct {
	Runs          int
	VisitedStates int
	States        int // the states the executor can reach
	Elapsed       time.Duration
}

// Result is what Run found.
type Result struct {
	Report   *cover.Report
	Strategy string
	Elapsed  time.Duration
	// Stopped says why the runs stopped: "runs", "time", "goal",
	// "interrupted".
	Stopped string
	// FirstFailure is the first conformance failure (nil if none), and
	// FailureAfter when it came.
	FirstFailure error
	FailureAfter time.Duration
	FailureRun   int
	// RunFailures counts the runs that deadlocked, panicked or stalled
	// (conformance failures are in Report.Outside).
	RunFailures int
	// Guided: for the guided strategy, the paths of the model aimed at,
	// how many of them a run followed to their end, and the runs that
	// mutated a schedule of the corpus.
	Guided *GuidedStats
	// Exhaustive: the figures of the exhaustive and dfs strategies.
	Exhaustive *ExhaustiveStats
}

// GuidedStats are the figures of the guided strategy.
type GuidedStats struct {
	Paths     int `json:"paths"`
	Realized  int `json:"realized"`
	Mutations int `json:"mutations"`
	Corpus    int `json:"corpus"`
}

// Strategies lists the strategies Run knows: random schedules, PCT,
// model-guided paths then a corpus of schedules, depth-first search pruned
// on model states already expanded (exhaustive), and the same search
// without pruning (dfs, control.Explore's).
var Strategies = []string{"random", "pct", "guided", "exhaustive", "dfs"}

// ResultJSON is a Result as `verify cover --json` prints it.
type ResultJSON struct {
	*cover.Report
	StatePercent        float64          `json:"state_percent"`
	TransitionPercent   float64          `json:"transition_percent"`
	AllVariantsFired    bool             `json:"all_variants_fired"`
	FirstFailure        string           `json:"first_failure,omitempty"`
	FirstFailureSeconds float64          `json:"first_failure_seconds,omitempty"`
	FirstFailureRun     int              `json:"first_failure_run,omitempty"`
	RunFailures         int              `json:"run_failures"`
	Guided              *GuidedStats     `json:"guided,omitempty"`
	Exhaustive          *ExhaustiveStats `json:"exhaustive,omitempty"`
}

// JSON returns r for JSON output.
func (r *Result) JSON() *ResultJSON {
	j := &ResultJSON{Report: r.Report, StatePercent: r.Report.StatePercent(), TransitionPercent: r.Report.TransitionPercent()}
	j.AllVariantsFired, _ = r.Report.AllVariantsFired()
	j.Guided = r.Guided
	j.Exhaustive = r.Exhaustive
	j.RunFailures = r.RunFailures
	if r.FirstFailure != nil {
		j.FirstFailure = r.FirstFailure.Error()
		j.FirstFailureSeconds = r.FailureAfter.Seconds()
		j.FirstFailureRun = r.FailureRun + 1
	}
	return j
}

// Executors lists the executors Run knows.
// (retry is not among them: its closed model fails each task's first
// attempts, a workload Run does not draw yet.)
var Executors = []string{"worksteal", "fifo", "wakeable", "timeslice", "priority"}

// Model returns the closed configuration that the built-in executor
// name follows, for the given workers, local capacity (worksteal) and
// workload, and a constructor of that executor.
func Model(name string, c model.Config) (model.Config, func() executor.Executor, error) {
	if c.Workers == 0 {
		c.Workers = 2
	}
	c = workloadDefaults(c)
	w := c.Workers
	var mk func() executor.Executor
	switch name {
	case "", "worksteal":
		c.Policy = model.WorkSteal
		if c.LocalCap == 0 {
			c.LocalCap = 2
		}
		lc := c.LocalCap
		mk = func() executor.Executor {
			return executor.NewWorkSteal(executor.WorkStealConfig{Workers: w, LocalCap: lc, GlobalInterval: -1})
		}
	case "fifo":
		c.Policy, c.Workers, c.LocalCap = model.FIFO, 1, 0
		mk = func() executor.Executor { return executor.NewFIFO() }
	case "wakeable":
		c.Policy, c.LocalCap = model.FIFO, 0
		mk = func() executor.Executor { return executor.NewWakeable(w) }
	case "timeslice":
		c.Policy, c.LocalCap = model.TimeSlice, 0
		if c.Slice == 0 {
			c.Slice = 1
		}
		sl := c.Slice
		mk = func() executor.Executor {
			return executor.NewTimeslice(executor.TimesliceConfig{Workers: w, Slice: sl})
		}
	case "priority":
		// Its trace is format v1.1: the spawns carry the priorities (task t
		// gets the model's, Priorities[t-1] or t-1) and the header the
		// aging, so its runs project onto the model's priority policy.
		c.Policy, c.LocalCap = model.Priority, 0
		if c.Aging == 0 {
			c.Aging = 2
		}
		ag := c.Aging
		mk = func() executor.Executor {
			return executor.NewPriority(executor.PriorityConfig{Workers: w, Aging: ag, MaxPriority: max(c.Tasks, 7)})
		}
	default:
		return c, nil, fmt.Errorf("cover: unknown executor %q (want one of %v)", name, Executors)
	}
	if err := c.Validate(); err != nil {
		return c, nil, fmt.Errorf("cover: %w", err)
	}
	return c, mk, nil
}

// workloadDefaults fills the workload fields of c left zero: 3 tasks, each
// pending once (unless endless) and woken once.
func workloadDefaults(c model.Config) model.Config {
	if c.Tasks == 0 {
		c.Tasks = 3
	}
	if c.Pendings == 0 && !c.Endless {
		c.Pendings = 1
	}
	if c.Wakes == 0 {
		c.Wakes = 1
	}
	return c
}

// resolve returns the closed configuration and the executor's constructor.
func (cfg *Config) resolve() (model.Config, func() executor.Executor, error) {
	if cfg.New == nil {
		return Model(cfg.Executor, cfg.Model)
	}
	w := workloadDefaults(cfg.Model)
	ex := cfg.New()
	defer ex.Close()
	_, ctl := ex.(executor.Controllable)
	_, rep := ex.(executor.Reporter)
	d, desc := ex.(executor.Describer)
	if cfg.onEngine() {
		ctl = true // its instrumented code is controlled instead
	}
	if !ctl || !rep || !desc {
		return w, nil, fmt.Errorf("cover: %T must be executor.Controllable, executor.Reporter and executor.Describer", ex)
	}
	mc, err := cover.ClosedConfig(d.Describe(), w)
	return mc, cfg.New, err
}

// Run runs the executor under cfg's strategy and measures the spec
// coverage of its runs. It returns an error for a bad configuration; the
// conformance failures the runs show are in the result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	mc, mk, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	sp, err := cover.NewSpace(ctx, mc, cover.Options{})
	if err != nil {
		return nil, err
	}
	cv := cover.New(sp)
	seed := cfg.Seed
	if seed == 0 {
		seed = 1
	}
	if cfg.Strategy == "" {
		cfg.Strategy = "random"
	}
	var strat control.Strategy
	var gd *guided
	var xs *exhaustive
	var sr *sparseRandom
	switch cfg.Strategy {
	case "random":
		strat = control.Random(seed)
		if cfg.onEngine() {
			sr = &sparseRandom{rng: rand.New(rand.NewPCG(seed, 0x5ba75e))}
			strat = sr
		}
	case "pct":
		d := cfg.PCTDepth
		if d == 0 {
			d = 3
		}
		if d < 0 || d > control.MaxPCTDepth {
			return nil, fmt.Errorf("cover: PCT depth %d: want 1 to %d", d, control.MaxPCTDepth)
		}
		k := 200
		if cfg.onEngine() {
			k = 0 // learnt from the runs: every atomic operation is a step
		}
		strat = control.NewPCT(d, k, seed)
	case "guided":
		gd = newGuided(sp, cv, seed)
	case "exhaustive", "dfs":
		ex := mk()
		d, ok := ex.(executor.Describer)
		if !ok {
			ex.Close()
			return nil, fmt.Errorf("cover: %T is not an executor.Describer", ex)
		}
		h := d.Describe()
		ex.Close()
		xs = newExhaustive(h, mc, cfg.Strategy == "exhaustive", cfg.Preemptions)
	default:
		return nil, fmt.Errorf("cover: unknown strategy %q (want one of %v)", cfg.Strategy, Strategies)
	}
	budget := cfg.Time
	if budget == 0 && cfg.Runs == 0 {
		budget = 10 * time.Second
	}
	res := &Result{Strategy: cfg.Strategy}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	start := time.Now()
	lastProgress := start
	can := sp.States() - sp.ExcludedStates()
	for run := 0; ; run++ {
		switch {
		case ctx.Err() != nil:
			res.Stopped = "interrupted"
		case cfg.Runs > 0 && run >= cfg.Runs:
			res.Stopped = "runs"
		case budget > 0 && time.Since(start) >= budget:
			res.Stopped = "time"
		case cfg.Goal > 0 && float64(cv.VisitedStates()) >= cfg.Goal*float64(can)/100:
			res.Stopped = "goal"
		case cfg.StopAtFailure && res.FirstFailure != nil:
			res.Stopped = "failure"
		}
		if res.Stopped != "" {
			break
		}
		var wl *coverWorkload
		var g *guide
		var obs func(traces.Event)
		switch {
		case xs != nil:
			strat, wl = xs.next(drawFor(mc, rng))
			obs = xs.observe
		case gd != nil:
			strat, g, wl = gd.next(drawWorkload(mc, rng))
		default:
			wl = drawWorkload(mc, rng)
			if sr != nil {
				obs = sr.observe
			}
		}
		h, evs, sched, runErr := coverRun(cfg.runner(), mk, mc, strat, wl, g, obs)
		if xs != nil {
			xs.done(runErr)
			if errors.Is(runErr, control.ErrDiverged) {
				runErr = nil // the search of this draw is given up, not a failure of the executor
			}
		}
		pr, err := cv.Add(h, func(yield func(traces.Event, error) bool) {
			for _, e := range evs {
				if !yield(e, nil) {
					return
				}
			}
		})
		if err != nil {
			return nil, err
		}
		if gd != nil {
			gd.done(g, wl, sched, pr)
		}
		if pr.Err == nil {
			pr.Err = runErr
		}
		if runErr != nil {
			res.RunFailures++
		}
		if pr.Err != nil && res.FirstFailure == nil {
			res.FirstFailure, res.FailureAfter, res.FailureRun = pr.Err, time.Since(start), run
		}
		if cfg.Progress != nil && time.Since(lastProgress) >= time.Second {
			lastProgress = time.Now()
			cfg.Progress(Progress{Runs: run + 1, VisitedStates: cv.VisitedStates(), States: can, Elapsed: time.Since(start)})
		}
	}
	res.Elapsed = time.Since(start)
	res.Report = cv.Report(10)
	if gd != nil {
		res.Guided = &GuidedStats{Paths: gd.Paths, Realized: gd.Realized, Mutations: gd.Mutations, Corpus: len(gd.corpus)}
	}
	if xs != nil {
		res.Exhaustive = xs.figures()
	}
	return res, nil
}

// coverReg is one task's registration: its waker and the wakes it may
// still get.
type coverReg struct {
	waker executor.Waker
	left  int
}

// coverWorkload is the workload's own draws, fixed before a run so that
// the run depends on them and on the strategy's choices alone: for each
// poll of each task, whether it wakes the armed registrations of the other
// tasks from its worker: pollWakes[i][2p] at the start of its poll p,
// [2p+1] after its registration.
type coverWorkload struct {
	pollWakes [][]bool
}

func drawWorkload(mc model.Config, rng *rand.Rand) *coverWorkload {
	w := &coverWorkload{pollWakes: make([][]bool, mc.Tasks)}
	for i := range w.pollWakes {
		w.pollWakes[i] = make([]bool, 2*(mc.Pendings+1))
		for k := range w.pollWakes[i] {
			w.pollWakes[i][k] = rng.IntN(2) == 0
		}
	}
	return w
}

// coverRun runs the workload once under strat and returns the trace and
// the schedule. g, if not nil, is the guide: it sees every event as it is
// recorded, and tells the futures which wakes to make from their worker.
// obs, if not nil, sees every event as it is recorded too.
func coverRun(run coverRunner, mk func() executor.Executor, mc model.Config, strat control.Strategy, wl *coverWorkload, g *guide, obs func(traces.Event)) (traces.Header, []traces.Event, control.Schedule, error) {
	var h traces.Header
	var evs []traces.Event
	T := mc.Tasks
	regs := make([]coverReg, T)
	done := make([]bool, T)
	// A registration is armed (its wakes may come) once its register
	// event is recorded: a wake must not come before the registration it
	// answers. Armed before Register, a wake from the task's event source
	// could land inside Register before its event on the instrumented
	// engine, where Register has yield points of its own, and the run left
	// the configuration ("registers a waker after 1 Pending results").
	wakers := make([]executor.Waker, T)
	unarmed := make([]bool, T)
	arm := func(i int) {
		if i >= 0 && i < T && unarmed[i] {
			regs[i], unarmed[i] = coverReg{waker: wakers[i], left: mc.Wakes}, false
		}
	}
	rec := recorderFunc(func(e traces.Event) {
		evs = append(evs, e)
		if e.Kind == traces.KindRegister {
			arm(int(e.Task) - 1)
		}
		if g != nil {
			g.observe(e)
		}
		if obs != nil {
			obs(e)
		}
	})
	// pause is a yield point of the workload's futures on the instrumented
	// engine, where they are not instrumented: a guided path may have
	// other goroutines take steps between a poll's beginning or its
	// registration and a wake this poll makes. Through the hook, Register
	// yields after its event; on the engine an executor's code may have
	// no yield point between its event and the future's next line, and
	// the future would run on to the poll's end first.
	pause := func() {}
	wakeOthers := func(i, k, worker int) {
		if g != nil && g.active() {
			// Only the wakes the guide's path asks of this worker.
			for {
				pause()
				j := g.wakeRequest(worker)
				if j == 0 || j-1 == i || regs[j-1].left == 0 {
					return
				}
				regs[j-1].left--
				regs[j-1].waker.Wake()
			}
		}
		if k < len(wl.pollWakes[i]) && wl.pollWakes[i][k] {
			for j := range T {
				if j != i && regs[j].left > 0 {
					regs[j].left--
					regs[j].waker.Wake()
				}
			}
		}
	}
	sched, err := run(strat, func(ctl executor.Scheduler, hook *control.Controller) {
		// The tasks' event sources (wakes from outside) start first, as
		// goroutines 1 to T, before any worker: each exists before its
		// task is spawned, and the guide knows which goroutine it is
		// before its first wake (newGuide). Started after each Spawn,
		// a source did not exist yet when a guided path wanted its wake
		// while main was stopped between the Spawn and the go statement,
		// which the instrumented engine, where Spawn has yield points
		// after its event, did often.
		for i := range T {
			ctl.Go(func() {
				for {
					ctl.Block(executor.PointNone, func() bool { return regs[i].left > 0 || done[i] })
					if regs[i].left == 0 {
						return
					}
					regs[i].left--
					regs[i].waker.Wake()
				}
			})
		}
		ex := mk()
		if hook != nil {
			ex.(executor.Controllable).SetScheduler(hook)
			ex.(executor.Reporter).SetRecorder(hook.Recorder(rec))
		} else {
			ex.(executor.Reporter).SetRecorder(rec)
			pause = func() { ctl.Yield(executor.PointNone) }
		}
		h = ex.(executor.Describer).Describe()
		for i := range T {
			polls := 0
			fut := executor.FutureFunc(func(cx *executor.Context) (any, bool) {
				p := polls
				polls++
				wakeOthers(i, 2*p, cx.Worker())
				if p < mc.Pendings {
					// Armed when Register records its event, before it
					// yields, so that a wake can land between the
					// registration and the Pending; after it, if the
					// executor recorded none.
					wakers[i], unarmed[i] = cx.Waker(), true
					cx.Register()
					arm(i)
					wakeOthers(i, 2*p+1, cx.Worker())
					return nil, false
				}
				done[i] = true
				return nil, true
			})
			var err error
			if p, ok := ex.(executor.Prioritized); ok && mc.Policy == model.Priority {
				pr := i // the model's priority of task i+1 when Priorities is nil
				if i < len(mc.Priorities) {
					pr = mc.Priorities[i]
				}
				_, err = p.SpawnPriority(fut, pr)
			} else {
				_, err = ex.Spawn(fut)
			}
			if err != nil {
				panic(err)
			}
		}
		_ = ex.Wait()
		_ = ex.Close()
	})
	if err != nil && !errors.Is(err, control.ErrBudget) {
		// A deadlock, a panic, a stall: the run failed; its trace so far
		// is still projected.
		err = fmt.Errorf("the run failed: %w", err)
	} else {
		err = nil
	}
	traces.SortBySeq(evs)
	return h, evs, sched, err
}

// coverRunner runs body once under strat and returns the run's schedule
// and error. body gets the scheduler of the run's goroutines, and the
// Controller to set on the executor through its hook (nil on the
// instrumented engine, where the executor's own code is controlled).
type coverRunner func(strat control.Strategy, body func(s executor.Scheduler, hook *control.Controller)) (control.Schedule, error)

// coverFair is rt's fairness bound for coverage runs on the engine: a
// guided path runs one goroutine for long stretches (a whole poll is
// hundreds of steps there), and the default bound of 64 switched to
// another goroutine in the middle, off the path, so that the states
// where one worker waits while another works were seldom reached. The
// built-in executors have no unbounded spin for the bound to stop; a run
// is still bounded by its steps.
const coverFair = 1 << 16

// onEngine reports whether cfg's runs are runs of the instrumented engine.
func (cfg *Config) onEngine() bool { return cfg.T != nil && onengine.Active() }

// runner returns how cfg's runs are made.
func (cfg *Config) runner() coverRunner {
	if cfg.onEngine() {
		t := cfg.T
		return func(strat control.Strategy, body func(executor.Scheduler, *control.Controller)) (control.Schedule, error) {
			// As a Controller's Run does: PCT draws its change points
			// in Begin and learns the length of a run in End.
			if b, ok := strat.(interface{ Begin() }); ok {
				b.Begin()
			}
			s, err := rt.Run(t, rt.Config{Strategy: strat, MaxSteps: onengine.Steps, Fair: coverFair}, func(*testing.T) { body(rt.Scheduler(), nil) })
			if e, ok := strat.(interface{ End(steps int) }); ok {
				e.End(s.Steps)
			}
			return s, err
		}
	}
	return func(strat control.Strategy, body func(executor.Scheduler, *control.Controller)) (control.Schedule, error) {
		ctl := control.NewWith(strat, control.Config{MaxSteps: 20000, Stall: 10 * time.Second})
		err := ctl.Run(func() { body(ctl, ctl) })
		return ctl.Schedule(), err
	}
}

type recorderFunc func(traces.Event)

func (f recorderFunc) Record(e traces.Event) { f(e) }

// sparseRandom is the random strategy on the instrumented engine, where
// every atomic operation, lock and channel operation is a decision: a
// uniform choice at each of them switches goroutines some ten times per
// event of the executor and seldom holds one worker back for long. It
// draws uniformly at the first decision after an event was recorded, and
// at the others only one time in sparseSwitch, running the current
// goroutine on otherwise.
type sparseRandom struct {
	rng   *rand.Rand
	fresh bool
}

const sparseSwitch = 64

func (s *sparseRandom) observe(traces.Event) { s.fresh = true }

// Choose implements control.Strategy.
func (s *sparseRandom) Choose(d control.Decision) int {
	n := len(d.Runnable)
	if d.CurrentRunnable && d.Runnable[0] == d.Current && d.Runnable[n-1] != d.Current && !s.fresh && s.rng.IntN(sparseSwitch) != 0 {
		return 0
	}
	s.fresh = false
	return s.rng.IntN(n)
}
