package pool

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/instrument/harness"
	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/properties/internal/onengine"
	"github.com/execspec/execspec/properties/pool/internal/isolate"
	"github.com/execspec/execspec/properties/pool/internal/shrink"
)

// The controlled mode. When an adapter's test runs under `verify test`
// with the pool library instrumented,
//
//	verify test ./ants --instrument 'github.com/panjf2000/ants/v2/...' --runs 2000
//
// each TestXxx is wrapped by the runtime (instrument/harness.Test). The suite
// sees that it runs so (the EXECSPEC_* environment that verify test sets)
// and takes the runs over (harness.Own): the test body is called again outside
// any bubble, and the suite makes one case per run (--runs of them),
// each run in its own testing/synctest bubble with one goroutine running
// at a time, the choices drawn by the strategy and recorded:
//
//	stress mode (go test)                   controlled mode (verify test)
//	Config.Cases cases from one stream      --runs cases from the same stream
//	                                          (case i is the same workload)
//	submitters on threads, pinned, started  submitters are controlled goroutines
//	  at a spin barrier                       (rt.Go), no barrier, no pinning
//	a hang: no observation for Timeout      a hang: the scheduler finds every
//	  (a watchdog goroutine)                  goroutine blocked and no timer
//	                                          pending; the suite names the
//	                                          stuck operations as it unwinds
//	progress against the median start       progress in virtual time: time
//	  delay and a canary goroutine            that passed once every goroutine
//	                                          was blocked; time let pass early
//	                                          (a timer fired while a goroutine
//	                                          could run, early timers) is not
//	                                          counted (rt.EarlyTime)
//	a crash: a child process dies           a crash: a panic on any goroutine
//	                                          is a no-crash finding with its
//	                                          stack, and the search goes on
//	shrunk by retries, seldom repeats       the workload and the schedule
//	                                          shrunk together; the finding is
//	                                          a schedule file (the shrunk case
//	                                          inside it) that replays it
//
// Each distinct cause (a finding's Key) is shrunk once, saved and
// replayed ten times in the process (Finding.Runs, Failures); the search
// goes on with the next case, and each cause is reported apart. Replaying
// a saved file (verify test --replay, EXECSPEC_SCHEDULE) runs its case
// once under its schedule and checks the run made the recorded choices.

// Modes, as Report.Mode says.
const (
	ModeStress  = "stress"
	ModeControl = "control"
)

// UnderControl reports whether the suite runs inside verify test's
// controlled runtime (its EXECSPEC_* environment is set).
func UnderControl() bool { return underControl() }

func underControl() bool { return onengine.Active() }

// controlledExplore is CheckOptions under control: the test body owns
// its controlled runs (harness.Own) and makes one case per run, drawn from the
// same stream as stress mode's cases (case i is the same workload in both
// modes). A failing run does not fail the test at once: each distinct
// cause (a Key not seen before, not known) is shrunk, workload and
// schedule together, saved as a schedule file with the case in it, and
// replayed; the search goes on with the next case. A replay (rt's replay
// strategy) runs the saved case once under the saved schedule.
func controlledExplore(t *testing.T, newPool func(Options) Pool, cfg Config) *Report {
	t.Helper()
	cfg = cfg.withDefaults()
	cfg.control = true
	s, err := harness.Own(t)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	rep := &Report{Mode: ModeControl, Known: map[string]int{}, Exercised: map[string]int{}}
	start := time.Now()
	defer func() {
		if err := s.Close(); err != nil {
			t.Logf("pool: %v", err)
		}
	}()
	// The probe runs in the session's bubble, outside any run, with the
	// instrumented packages initialised afresh there (rt's package-init
	// rule): what it makes at package level (pond v2's default pool, its
	// workers, the channel of a context it holds) belongs to the bubble,
	// not to the world outside it.
	var ab abilities
	var f *Finding
	if err := s.Do(func() { ab, f = probe(newPool, drawOptions(rand.New(rand.NewPCG(cfg.Seed, 1)), cfg)) }); err != nil {
		s.Failed(0, err, "", control.Schedule{})
		t.Fatalf("pool: %v", err)
	}
	if f != nil {
		rep.Findings = append(rep.Findings, f)
		return rep
	}
	rep.Abilities = ab.String()
	if sched, meta, ok := s.Replaying(); ok {
		replayFinding(t, s, newPool, cfg, sched, meta, rep)
		rep.Elapsed = time.Since(start)
		return rep
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0xda3e39cb94b95bdb))
	seen := map[string]bool{}
	for i := range s.Runs() {
		if s.Spent() {
			// verify test --time: the budget is spent; the cases
			// made stand.
			rep.Stopped = fmt.Sprintf("stopped after %d cases: the time budget (verify test --time) was spent", rep.Cases)
			break
		}
		w := generate(r, cfg, ab)
		rep.Cases++
		exercised(w, ab, rep.Exercised)
		fs, sched, err := ctlRun(newPool, w, cfg, s.Run)
		if err != nil {
			if errors.Is(err, control.ErrBudget) {
				rep.Unknown++
				continue
			}
			// Neither a pass nor a finding (a strategy's error, a run
			// already in progress): the search cannot go on.
			s.Failed(i+1, err, "", sched)
			t.Errorf("pool: case %d under control: %v", i, err)
			break
		}
		for _, f := range fs {
			if !rep.novel(f, cfg, seen) {
				continue
			}
			key := f.Key()
			after := time.Since(start)
			path := s.Path(strings.NewReplacer("/", "-", " ", "_").Replace(key))
			// The case as found is saved first, and said on a progress
			// line: an interrupt while shrinking (Ctrl-C) leaves the
			// finding, unshrunk, with the command that replays it.
			if err := harness.SaveSchedule(path, sched, caseMeta(t.Name(), cfg.Seed, i, key, w)); err == nil {
				t.Logf("%s%s: case %d shows %s; shrinking it (as found: %s)", harness.ProgressPrefix, t.Name(), i, key, s.ReplayCommand(path))
			}
			g, gs := ctlShrink(s, newPool, w, sched, f, cfg)
			g.After, g.Case = after, i
			meta := caseMeta(t.Name(), cfg.Seed, i, key, g.shrunk)
			if err := harness.SaveSchedule(path, gs, meta); err != nil {
				t.Errorf("pool: %v", err)
				path = ""
			}
			g.Schedule = path
			if path != "" {
				g.Replay = s.ReplayCommand(path)
			}
			s.Failed(i+1, g, path, gs)
			rep.Findings = append(rep.Findings, g)
		}
	}
	rep.Elapsed = time.Since(start)
	return rep
}

// caseMeta is what a saved schedule keeps of its case: the shrunk
// workload itself (JSON), since shrinking makes a case no seed draws.
func caseMeta(test string, seed uint64, i int, key string, w Workload) harness.Meta {
	data, _ := json.Marshal(w)
	return harness.Meta{
		"pool.test":     test,
		"pool.seed":     strconv.FormatUint(seed, 10),
		"pool.case":     strconv.Itoa(i),
		"pool.finding":  key,
		"pool.workload": string(data),
	}
}

// replayFinding runs the case saved with a schedule under that schedule,
// once, and reports what it shows as a search would.
func replayFinding(t *testing.T, s *harness.Session, newPool func(Options) Pool, cfg Config, sched control.Schedule, meta harness.Meta, rep *Report) {
	t.Helper()
	var w Workload
	data, ok := meta["pool.workload"]
	if !ok {
		t.Fatalf("pool: the schedule has no pool case (# pool.workload: ...); was it saved by the pool suite?")
	}
	if err := json.Unmarshal([]byte(data), &w); err != nil {
		t.Fatalf("pool: the schedule's pool.workload: %v", err)
	}
	rep.Cases = 1
	fs, got, err := ctlRun(newPool, w, cfg, func(main func()) (control.Schedule, error) { return s.Replay(sched, main) })
	if err != nil {
		s.Failed(1, err, "", control.Schedule{})
		t.Errorf("pool: replaying the %s finding: %v", meta["pool.finding"], err)
		return
	}
	for _, f := range fs {
		if known(cfg.Known, f) {
			rep.Known[f.Key()]++
			continue
		}
		rep.Findings = append(rep.Findings, f)
		s.Failed(1, f, "", got)
	}
}

// ctlRun runs w once under control, with run (a Session's Run, RunWith
// or Replay), and returns its findings. The scheduler's verdicts become
// findings: a hang (every goroutine blocked, no timer pending) is the
// suite's description of what was stuck (no-hang, cancel-stops), a panic
// on a goroutine the suite does not watch is no-crash with its stack. A
// run stopped by the step budget or a replay that diverged is an error.
func ctlRun(newPool func(Options) Pool, w Workload, cfg Config, run func(main func()) (control.Schedule, error)) ([]*Finding, control.Schedule, error) {
	var fs []*Finding
	var stuck *Finding
	cfg.onAbort = func(h *Finding) { stuck = h }
	sched, err := run(func() { fs = runCase(newPool, w, cfg) })
	var hang *rt.HangError
	var pe *rt.PanicError
	switch {
	case err == nil:
	case errors.As(err, &hang):
		f := stuck
		if f == nil {
			f = finding(NoHang, "", "the scheduler found the case stuck")
		}
		f.Detail += " (" + hang.Error() + ")"
		f.Stack = hangStacks(hang)
		f.cause = err
		fs = []*Finding{f}
	case errors.As(err, &pe):
		stack := string(pe.Stack)
		f := finding(NoCrash, isolate.Site(stack), "goroutine %d panicked: %v", pe.G, pe.Value)
		f.Stack = stack
		f.cause = err
		fs = []*Finding{f}
	default:
		return nil, sched, err
	}
	for _, f := range fs {
		f.Pool = w.Options.String()
		f.Workload = w.String()
		f.shrunk = w
	}
	return fs, sched, nil
}

func hangStacks(h *rt.HangError) string {
	var b strings.Builder
	for _, g := range h.Blocked {
		fmt.Fprintf(&b, "%s (%s at %s):\n%s\n", g.Name(), g.Op, g.Where, g.Stack)
	}
	return b.String()
}

// ctlShrink makes w smaller while it still shows f's defect under some
// schedule, within cfg.ShrinkTime, and then the schedule: a candidate
// workload is first run under the failing schedule's choices (as far as
// they apply, then no preemption), then under cfg.Retries schedules,
// random and PCT in turn; the kept schedule is then brought towards no preemptions
// (choices set to 0, the way rapid shrinks a drawn schedule). It returns
// the finding of the smallest case, its schedule, and how often replaying
// that schedule showed the defect again (Runs, Failures: 10 replays).
func ctlShrink(s *harness.Session, newPool func(Options) Pool, w Workload, sched control.Schedule, f *Finding, cfg Config) (*Finding, control.Schedule) {
	key := f.Key()
	deadline := time.Now().Add(cfg.ShrinkTime)
	best, bestSched := f, sched
	seed := cfg.Seed ^ 0x5851f42d4c957f2d
	shows := func(c Workload, strat control.Strategy) (*Finding, control.Schedule, bool) {
		fs, got, err := ctlRun(newPool, c, cfg, func(main func()) (control.Schedule, error) {
			return s.RunWith(rt.Config{Strategy: strat, Seed: seed}, main)
		})
		if err != nil {
			return nil, got, false
		}
		for _, g := range fs {
			if g.Key() == key {
				return g, got, true
			}
		}
		return nil, got, false
	}
	w = shrink.Greedy(w, candidates, func(c Workload) bool {
		for try := 0; try <= cfg.Retries; try++ {
			var strat control.Strategy = shrink.Guided(bestSched.Choices)
			if try > 0 {
				// Random and PCT in turn: a race that needs one
				// goroutine held back for long (a submitter between its
				// check and its write while Close runs) is what PCT's
				// priorities give and a random walk seldom does.
				seed++
				strat = control.Random(seed)
				if try%2 == 0 {
					strat = control.NewPCT(3, 0, seed)
				}
			}
			if g, got, ok := shows(c, strat); ok {
				best, bestSched = g, got
				return true
			}
		}
		return false
	}, deadline)
	// The schedule: fewer preemptions, from the end.
	shrink.Preemptions(bestSched.Choices, func(try []control.Choice) ([]control.Choice, bool) {
		g, got, ok := shows(w, shrink.Guided(try))
		if ok {
			best, bestSched = g, got
		}
		return bestSched.Choices, ok
	}, deadline)
	// How reliably the schedule replays the defect.
	best.Runs, best.Failures = 0, 0
	for range 10 {
		fs, _, err := ctlRun(newPool, w, cfg, func(main func()) (control.Schedule, error) { return s.Replay(bestSched, main) })
		best.Runs++
		if err == nil && slices.ContainsFunc(fs, func(g *Finding) bool { return g.Key() == key }) {
			best.Failures++
		}
	}
	best.shrunk = w
	return best, bestSched
}

// runControlled runs the case on the goroutine that holds control (the
// run's goroutine 0): its submitters and the pool's goroutines are
// controlled goroutines, and a hang is the scheduler's to decide. If the
// scheduler stops the run, the suite describes where the case was stuck
// (cfg.onAbort) while the goroutine unwinds.
func (tr *tracker) runControlled(newPool func(Options) Pool) []*Finding {
	// The suite's goroutines are the harness's; the goroutines they
	// start take the mark, and poolCall lifts it around each call into
	// the pool.
	defer rt.Harness(rt.Harness(true))
	defer func() {
		if v := recover(); v != nil {
			if rt.IsAbort(v) && tr.cfg.onAbort != nil {
				tr.cfg.onAbort(tr.hang())
			}
			panic(v)
		}
	}()
	tr.run(newPool)
	return tr.verify()
}

// reraiseAbort re-panics the scheduler's signal that a run is stopped:
// every recover of the suite calls it first, so that a controlled
// goroutine unwinds instead of going on.
func reraiseAbort(v any) {
	if rt.IsAbort(v) {
		panic(v)
	}
}
