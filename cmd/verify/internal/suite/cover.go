package suite

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/execspec/execspec/cmd/verify/internal/gotest"
	"io"
	"strings"
	"time"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/properties/broken"
	"github.com/execspec/execspec/properties/coverage"
)

func deepNames() string {
	var s []string
	for _, m := range broken.DeepCatalogue() {
		s = append(s, m.Name)
	}
	return strings.Join(s, ", ")
}

// Cover is verify cover: how much of the model an executor's runs reach.
var Cover = cli.Command{
	Name:    "cover",
	Summary: "measure how much of the model's state space an executor's runs reach",
	Run:     runCover,
}

type coverFlags struct {
	executor string
	workers  int
	tasks    int
	pendings int
	wakes    int
	localCap int
	strategy string
	pctDepth int
	preempt  int
	dur      time.Duration
	runs     int
	goal     float64
	seed     uint64
	json     bool
	html     string
	quiet    bool
	stop     bool
	noHook   bool
}

func coverFlagSet(stderr io.Writer, f *coverFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("verify cover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.executor, "executor", "worksteal", "the executor: "+strings.Join(coverage.Executors, ", ")+", deep (the base of the deep-state mutants) or deep/NAME ("+deepNames()+")")
	fs.IntVar(&f.workers, "workers", 2, "workers (fifo has one)")
	fs.IntVar(&f.tasks, "tasks", 3, "tasks of the workload")
	fs.IntVar(&f.pendings, "pendings", 1, "Pending results of each task before Ready")
	fs.IntVar(&f.wakes, "wakes", 1, "wakes of each registered waker")
	fs.IntVar(&f.localCap, "local-cap", 2, "capacity of each local queue (worksteal)")
	fs.StringVar(&f.strategy, "strategy", "guided", "how schedules are chosen: "+strings.Join(coverage.Strategies, ", ")+" (guided reached more states and transitions than random on every configuration measured)")
	fs.IntVar(&f.pctDepth, "pct-depth", 3, "PCT's bug depth (--strategy pct)")
	fs.IntVar(&f.preempt, "preemptions", 0, "at most this many preemptions per run (--strategy exhaustive or dfs; 0: no bound)")
	fs.DurationVar(&f.dur, "time", 0, "stop after this long (default 10s when --runs is not given)")
	fs.IntVar(&f.runs, "runs", 0, "stop after this many runs")
	fs.Float64Var(&f.goal, "goal", 0, "stop once this percentage of the reachable states is visited")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the schedules and the workload's draws")
	fs.BoolVar(&f.json, "json", false, "print the report as JSON on stdout")
	fs.StringVar(&f.html, "html", "", "also write the report as an HTML page to this file")
	fs.BoolVar(&f.quiet, "q", false, "no progress on stderr")
	fs.BoolVar(&f.stop, "stop-at-failure", false, "stop at the first run that fails")
	fs.BoolVar(&f.noHook, "no-hook", false, "leave the executor's Scheduler hook unused and run it on the instrumented engine: a test binary is built from execspec's source with package executor (and properties/broken) rewritten, as verify test does, and its goroutines, locks, channels and atomics are the yield points")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: verify cover [flags]")
		fmt.Fprintln(stderr, "\nRuns an executor under controlled interleavings on the workload of a closed")
		fmt.Fprintln(stderr, "model configuration, projects every run's trace onto the model, and reports")
		fmt.Fprintln(stderr, "how many of the model's reachable states and transitions the runs visited,")
		fmt.Fprintln(stderr, "per rule variant, and which classes of states they never reached. A visited")
		fmt.Fprintln(stderr, "state outside the model is a conformance failure. Ctrl-C stops the runs and")
		fmt.Fprintln(stderr, "prints what was reached so far.")
		fmt.Fprintln(stderr, "\nExamples:")
		fmt.Fprintln(stderr, "  verify cover --executor worksteal --workers 2 --tasks 3 --pendings 1 --local-cap 2 --strategy guided --time 120s")
		fmt.Fprintln(stderr, "  verify cover --executor timeslice --runs 2000 --json")
		fmt.Fprintln(stderr, "  verify cover --executor worksteal --no-hook --goal 100 --time 60s")
		fmt.Fprintln(stderr, "\nWith --no-hook the runs are made by an instrumented test binary (go and")
		fmt.Fprintln(stderr, "execspec's source are needed: the module of the working directory, when it is")
		fmt.Fprintln(stderr, "execspec or requires it); without it they go through the executor's hook.")
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nExit codes: 0 no run left the model (and the goal, if any, was met), 1 a run left")
		fmt.Fprintln(stderr, "the model or the goal was missed, 2 usage, 3 interrupted.")
	}
	return fs
}

// coverJSON is the --json output: the report and how the runs went.
type coverJSON struct {
	Schema   int     `json:"schema"`
	Verdict  string  `json:"verdict"` // as the exit code: violated when a run left the model or the goal was missed
	Executor string  `json:"executor"`
	Strategy string  `json:"strategy"`
	Seed     uint64  `json:"seed"`
	Elapsed  float64 `json:"elapsed_seconds"`
	Stopped  string  `json:"stopped"`
	NoHook   bool    `json:"no_hook,omitempty"` // the runs were on the instrumented engine
	*coverage.ResultJSON
}

func runCover(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f coverFlags
	fs := coverFlagSet(stderr, &f)
	if code, ok := cli.ParseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "verify cover: unexpected argument %q\n", fs.Arg(0))
		return cli.ExitUsage
	}
	if err := checkCoverFlags(fs, &f); err != nil {
		return cli.FlagError(stderr, "cover", err)
	}
	cfg := coverage.Config{
		Executor: f.executor,
		Model:    model.Config{Workers: f.workers, Tasks: f.tasks, Pendings: f.pendings, Wakes: f.wakes, LocalCap: f.localCap},
		Strategy: f.strategy,
		PCTDepth: f.pctDepth,

		Preemptions: f.preempt,
		Seed:        f.seed,
		Runs:        f.runs,
		Time:        f.dur,
		Goal:        f.goal,

		StopAtFailure: f.stop,
	}
	// The base of the deep-state mutants ("deep"), or one of them
	// ("deep/NAME").
	mk, deep, err := broken.DeepNamed(f.executor, broken.DeepConfig{Workers: f.workers, LocalCap: f.localCap})
	if err != nil {
		fmt.Fprintf(stderr, "verify cover: %v\n", err)
		return cli.ExitUsage
	}
	if deep {
		cfg.New = mk
	}
	if !f.quiet {
		cfg.Progress = coverProgress(stderr)
	}
	var res *coverage.Result
	if f.noHook {
		var code int
		if res, code = gotest.CoverNoHook(ctx, cfg, f.quiet, stderr); res == nil {
			return code
		}
	} else {
		res, err = coverage.Run(ctx, cfg)
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "verify cover: interrupted while building the model's state space")
			return cli.ExitUnknown
		}
		fmt.Fprintf(stderr, "verify cover: %v\n", err)
		return cli.ExitUsage
	}
	if !f.quiet && !f.json && cli.IsTerminal(stderr) {
		fmt.Fprint(stderr, "\r\033[K")
	}
	r := res.Report
	if f.html != "" {
		if err := writeCoverHTML(f.html, &f, res); err != nil {
			fmt.Fprintf(stderr, "verify cover: %v\n", err)
			return cli.ExitUsage
		}
	}
	code := coverCode(&f, res)
	if f.json {
		out := coverJSON{Schema: cli.JSONSchema, Verdict: cli.VerdictOf(code), Executor: f.executor, Strategy: res.Strategy, Seed: f.seed, Elapsed: res.Elapsed.Seconds(), Stopped: res.Stopped, NoHook: f.noHook, ResultJSON: res.JSON()}
		if err := cli.PrintJSON(stdout, out, true); err != nil {
			fmt.Fprintf(stderr, "verify cover: %v\n", err)
			return cli.ExitUsage
		}
	} else {
		engine := ""
		if f.noHook {
			engine = " (hook unused, instrumented engine)"
		}
		fmt.Fprintf(stdout, "executor %s%s, strategy %s, seed %d: %d runs in %v (stopped: %s)\n", f.executor, engine, res.Strategy, f.seed, r.Runs, res.Elapsed.Round(time.Millisecond), res.Stopped)
		if g := res.Guided; g != nil {
			fmt.Fprintf(stdout, "guided: %d paths of the model aimed at, %d followed to their end; %d runs mutated schedules of a corpus of %d\n", g.Paths, g.Realized, g.Mutations, g.Corpus)
		}
		if x := res.Exhaustive; x != nil {
			fmt.Fprintf(stdout, "%s: %d workload draws searched, %d runs cut at a model state expanded elsewhere, %d model states keyed, %d runs diverged\n", res.Strategy, x.Draws, x.Cuts, x.States, x.Diverged)
		}
		fmt.Fprint(stdout, r.String())
		if res.FirstFailure != nil {
			fmt.Fprintf(stdout, "\nfirst failure, run %d, %v into the runs:\n  %v\n", res.FailureRun+1, res.FailureAfter.Round(time.Millisecond), res.FirstFailure)
		}
		if f.html != "" {
			fmt.Fprintf(stdout, "\ncoverage page: %s\n", f.html)
		}
	}
	return code
}

// coverCode is the exit code of a coverage run: 1 when a run left the
// model or the goal was missed, 3 when interrupted, else 0.
func coverCode(f *coverFlags, res *coverage.Result) int {
	switch {
	case res.FirstFailure != nil:
		return cli.ExitViolated
	case res.Stopped == "interrupted":
		return cli.ExitUnknown
	case f.goal > 0 && res.Report.StatePercent() < f.goal:
		return cli.ExitViolated
	}
	return cli.ExitHolds
}

// coverProgress prints the visited share as the runs go: one rewritten
// line on a terminal, a plain line every second elsewhere.
func coverProgress(w io.Writer) func(coverage.Progress) {
	clear, end := "\r\033[K", ""
	if !cli.IsTerminal(w) {
		clear, end = "", "\n"
	}
	return func(p coverage.Progress) {
		pc := 0.0
		if p.States > 0 {
			pc = 100 * float64(p.VisitedStates) / float64(p.States)
		}
		fmt.Fprintf(w, "%scover: %d runs, %d of %d states (%.1f%%), %v%s", clear, p.Runs, p.VisitedStates, p.States, pc, p.Elapsed.Round(time.Second), end)
	}
}

// coverFlagSpecs is the table of verify cover's flags. A zero that the
// library would read as "the default" (--pendings 0, --runs 0, --time 0)
// is refused, not replaced.
func coverFlagSpecs(f *coverFlags) []cli.FlagSpec {
	strategy := func(names ...string) func() bool {
		return func() bool {
			for _, n := range names {
				if f.strategy == n {
					return true
				}
			}
			return false
		}
	}
	return []cli.FlagSpec{
		{Name: "workers", Min: 1, Max: model.MaxWorkers, Applies: func() string {
			if f.executor == "fifo" && f.workers != 1 {
				return "--executor fifo has one worker"
			}
			return ""
		}},
		{Name: "tasks", Min: 1, Max: model.MaxTasks},
		{Name: "pendings", Min: 1, Max: 15},
		{Name: "wakes", Min: 1, Max: 15},
		{Name: "local-cap", Min: 1, Max: 15, Applies: cli.OnlyWith(func() bool {
			return f.executor == "worksteal" || f.executor == "deep" || strings.HasPrefix(f.executor, "deep/")
		}, "with an executor of local queues (--executor worksteal or deep)")},
		{Name: "pct-depth", Min: 1, Max: maxPCTDepth, Applies: cli.OnlyWith(strategy("pct"), "with --strategy pct")},
		{Name: "preemptions", Min: 0, Max: maxPreempt, Applies: cli.OnlyWith(strategy("exhaustive", "dfs"), "with --strategy exhaustive or dfs")},
		{Name: "time", Min: int64(time.Millisecond), Max: cli.MaxDuration, ExplicitOnly: true},
		{Name: "runs", Min: 1, Max: maxRuns, ExplicitOnly: true},
	}
}

// checkCoverFlags checks verify cover's flags: the table, and --goal, a
// percentage (a float the table does not read).
func checkCoverFlags(fs *flag.FlagSet, f *coverFlags) error {
	err := cli.ValidateFlags(fs, coverFlagSpecs(f))
	if !(f.goal >= 0 && f.goal <= 100) { // NaN fails both
		err = errors.Join(err, fmt.Errorf("--goal %v: want a percentage, 0 to 100", f.goal))
	}
	return err
}
