package pool

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/execspec/execspec/instrument/rt"
)

// The controlled mode. When an adapter's test runs under `verify test`
// with the pool library instrumented,
//
//	verify test ./ants --instrument 'github.com/panjf2000/ants/v2/...' --runs 2000
//
// each TestXxx is wrapped by the runtime (instrument/rt.Test): it runs
// --runs times, each run in its own testing/synctest bubble with one
// goroutine running at a time, the choices drawn by the strategy and
// recorded. The suite sees that it runs so (the EXECSPEC_* environment
// that verify test sets: rt.EnvRuns, rt.EnvSchedule) and makes each run
// one case:
//
//	stress mode (go test)                   controlled mode (verify test)
//	Config.Cases cases from one stream      one case per run (--runs), case n
//	                                          drawn from (seed, n) alone
//	submitters on threads, pinned, started  submitters are controlled goroutines
//	  at a spin barrier                       (rt.Go), no barrier, no pinning
//	a hang: no observation for Timeout      a hang: the scheduler finds every
//	  (a watchdog goroutine)                  goroutine blocked and no timer
//	                                          pending (rt's deadlock or leak);
//	                                          the suite names the stuck
//	                                          operations as it unwinds
//	progress against the median start       progress in virtual time: time
//	  delay and a canary goroutine            passes only when every goroutine
//	                                          is blocked, so a task pending with
//	                                          room for ProgressFloor of it is
//	                                          a pool that waited for a timer
//	a crash: a child process dies           a crash: a panic on any goroutine is
//	                                          the run's failure, with its stack
//	shrunk by retries, seldom repeats       replayed exactly: rt saves the run's
//	                                          schedule, the suite the case
//	                                          numbers beside it (.pool.json)
//
// A failing run fails the test with the findings, rt saves its schedule
// and prints the command that replays it; the replay draws the same
// cases (read from the file beside the schedule) and makes the same
// choices. The search stops at the first failing run, as rt.Test does;
// defects acknowledged by Config.Known (or a Library) are logged, not
// failed, so the runs go on past them.

// Modes, as Report.Mode says.
const (
	ModeStress  = "stress"
	ModeControl = "control"
)

// UnderControl reports whether the suite runs inside verify test's
// controlled runtime (its EXECSPEC_* environment is set).
func UnderControl() bool { return underControl() }

func underControl() bool {
	return os.Getenv(rt.EnvRuns) != "" || os.Getenv(rt.EnvSchedule) != ""
}

// caseNote is the file beside a saved schedule: which cases the failing
// run drew, so that its replay draws them again.
type caseNote struct {
	Test  string `json:"test"`
	Seed  uint64 `json:"seed"`
	Cases []int  `json:"cases"` // one per CheckOptions call of the run, in order
}

// noteSuffix follows the schedule's path to name the case note.
const noteSuffix = ".pool.json"

// ctlState numbers the controlled cases of each test across the runs of
// the process: rt.Test calls the test's body once per run, on a fresh
// *testing.T (the bubble's).
var ctlState struct {
	sync.Mutex
	next   map[string]int
	run    map[string]*runCases
	replay map[string][]int
}

type runCases struct {
	t     *testing.T
	cases []int
}

// schedulePath is where rt.Test saves the schedule of a failing run of
// test: rt's rule, in the directory of rt.EnvOut.
func schedulePath(test string) string { return rt.SchedulePath(os.Getenv(rt.EnvOut), test) }

// nextCase returns the number of the case this CheckOptions call runs,
// and records it in the note beside the schedule rt would save for a
// failure of this run (in a replay: reads it from there).
func nextCase(t *testing.T, seed uint64) (int, error) {
	ctlState.Lock()
	defer ctlState.Unlock()
	if ctlState.next == nil {
		ctlState.next, ctlState.run, ctlState.replay = map[string]int{}, map[string]*runCases{}, map[string][]int{}
	}
	name := t.Name()
	rc := ctlState.run[name]
	if rc == nil || rc.t != t {
		rc = &runCases{t: t}
		ctlState.run[name] = rc
	}
	if sched := os.Getenv(rt.EnvSchedule); sched != "" {
		list, ok := ctlState.replay[name]
		if !ok {
			data, err := os.ReadFile(sched + noteSuffix)
			if err != nil {
				return 0, fmt.Errorf("replaying %s: the cases it ran are not known: %w", sched, err)
			}
			var note caseNote
			if err := json.Unmarshal(data, &note); err != nil {
				return 0, fmt.Errorf("%s%s: %w", sched, noteSuffix, err)
			}
			if note.Seed != seed {
				return 0, fmt.Errorf("%s%s: the schedule ran cases of seed %d, this test draws from seed %d (-pool.seed)", sched, noteSuffix, note.Seed, seed)
			}
			list = note.Cases
			ctlState.replay[name] = list
		}
		i := len(rc.cases)
		if i >= len(list) {
			return 0, fmt.Errorf("%s%s: the schedule's run made %d checks, this one makes more", sched, noteSuffix, len(list))
		}
		rc.cases = append(rc.cases, list[i])
		return list[i], nil
	}
	n := ctlState.next[name]
	ctlState.next[name]++
	rc.cases = append(rc.cases, n)
	path := schedulePath(name)
	data, _ := json.Marshal(caseNote{Test: name, Seed: seed, Cases: rc.cases})
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return n, err
	}
	return n, os.WriteFile(path+noteSuffix, data, 0o644)
}

// controlledCase is CheckOptions under control: one case, in the run
// that rt.Test is making.
func controlledCase(t *testing.T, newPool func(Options) Pool, cfg Config) *Report {
	t.Helper()
	cfg = cfg.withDefaults()
	cfg.control = true
	rep := &Report{Mode: ModeControl, Known: map[string]int{}, Exercised: map[string]int{}}
	start := time.Now()
	n, err := nextCase(t, cfg.Seed)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	ab, f := probe(newPool, drawOptions(rand.New(rand.NewPCG(cfg.Seed, 1)), cfg))
	if f != nil {
		rep.Findings = append(rep.Findings, f)
		return rep
	}
	rep.Abilities = ab.String()
	w := generate(rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15^uint64(n))), cfg, ab)
	rep.Cases = 1
	exercised(w, ab, rep.Exercised)
	cfg.onAbort = func(h *Finding) {
		// The scheduler stopped the run (every goroutine blocked, a leak,
		// or the step budget): what the suite saw, before rt's report.
		h.Workload = w.String()
		h.Pool = w.Options.String()
		if known(cfg.Known, h) {
			t.Logf("pool: case %d (seed %d) stopped by the scheduler where a known defect was acknowledged: %v", n, cfg.Seed, h)
			return
		}
		t.Errorf("%v", h)
		t.Logf("pool: case %d of seed %d under control; the schedule and %s beside it replay it", n, cfg.Seed, noteSuffix)
	}
	for _, f := range runCase(newPool, w, cfg) {
		if known(cfg.Known, f) {
			rep.Known[f.Key()]++
			continue
		}
		f.After = time.Since(start)
		rep.Findings = append(rep.Findings, f)
	}
	if len(rep.Findings) > 0 {
		t.Logf("pool: case %d of seed %d under control; the schedule and %s beside it replay it", n, cfg.Seed, noteSuffix)
	}
	return rep
}

// runControlled runs the case on the goroutine that holds control (the
// run's goroutine 0): its submitters and the pool's goroutines are
// controlled goroutines, and a hang is the scheduler's to decide. If the
// scheduler stops the run, the suite describes where the case was stuck
// (cfg.onAbort) while the goroutine unwinds.
func (tr *tracker) runControlled(newPool func(Options) Pool) []*Finding {
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
