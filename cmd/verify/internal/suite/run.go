package suite

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
	"github.com/execspec/execspec/traces"
	"github.com/execspec/execspec/traces/picture"
)

// Run is verify run: the property suite on a built-in executor.
var Run = cli.Command{
	Name:    "run",
	Summary: "run the property suite on a built-in executor",
	Run:     runRun,
}

type runFlags struct {
	executor     string
	seed         uint64
	checks       int
	only, skip   string
	cases        string
	out          string
	uncontrolled bool
	pct          int
	list         bool
	shrink       time.Duration
	all          bool
	json         bool
}

// runHelp is what `verify run -h` prints before the flags; runExits, after them.
const runHelp = `Usage: verify run [flags]

Runs every property of the suite on fresh instances of an executor, with
workloads that rapid draws and shrinks. A controllable executor runs one
goroutine at a time with schedules drawn from rapid, so a failure replays
exactly. On a failure of an executor that reports its events (executor.Reporter)
it writes the trace and an HTML timeline with the root cause marked,
and prints the command that replays the failing case. Ctrl-C stops the run
and prints what was found so far.

verify run works in its own process, where nothing is instrumented: its
controlled runs go through the executor's hook. To run the suite on the
instrumented engine with the hook unused, use verify test:
  verify test ./properties/testdata/hookless --instrument github.com/execspec/execspec/executor --run TestBuiltins
(HOOKLESS_EXECUTORS=NAME narrows it to one executor). A user's executor runs
there through a test of its own that calls properties.Run (see the README).

Examples:
  verify run --executor worksteal --checks 1000
  verify run --executor broken/lost-wakeup
  verify run --executor fifo --property fairness --seed 42 --checks 1
`

const runExits = `Exit codes: 0 every property holds, 1 violated, 2 usage, 3 unknown (interrupted).
`

func runFlagSet(stderr io.Writer, f *runFlags) *flag.FlagSet {
	fs := cli.NewFlagSet("verify run", stderr, runHelp, runExits)
	fs.StringVar(&f.executor, "executor", "worksteal", "the executor: a built-in ("+strings.Join(executor.BuiltinNames(), ", ")+") or broken/NAME from the catalogue of broken executors (see --list)")
	fs.Uint64Var(&f.seed, "seed", 0, "rapid's base seed (0: a random one); a failure prints the seed that draws it again")
	fs.IntVar(&f.checks, "checks", 200, fmt.Sprintf("cases per property (1 to %d)", maxChecks))
	fs.StringVar(&f.only, "property", "", "run only these properties (comma-separated names, see --list)")
	fs.StringVar(&f.skip, "skip", "", "leave out these properties (comma-separated)")
	fs.StringVar(&f.cases, "cases", "", "draw only the cases of these properties, still checking every property on them (comma-separated)")
	fs.StringVar(&f.out, "out", "", "directory for the trace and HTML timeline of a failure (default: the user's cache directory, execspec/run)")
	fs.BoolVar(&f.uncontrolled, "uncontrolled", false, "run a controllable executor as a black box (no controlled interleavings)")
	fs.IntVar(&f.pct, "pct", 0, fmt.Sprintf("draw controlled schedules with PCT of this depth, 1 to %d (0: a rapid choice at every decision)", maxPCTDepth))
	fs.BoolVar(&f.list, "list", false, "list the properties and the executors, and exit")
	fs.DurationVar(&f.shrink, "shrink-time", 5*time.Second, "time limit for shrinking one failure")
	fs.BoolVar(&f.json, "json", false, "print one JSON object on stdout instead of the report (docs/json-output.md)")
	fs.BoolVar(&f.all, "all", false, "run every property even after one failed (by default the run stops at the first failure)")
	return fs
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f runFlags
	fs := runFlagSet(stderr, &f)
	if code, ok := cli.ParseNoArgs(fs, args, stderr); !ok {
		return code
	}
	if f.list {
		printRunList(stdout)
		return cli.ExitHolds
	}
	newEx, err := lookupExecutor(f.executor)
	if err != nil {
		fmt.Fprintf(stderr, "verify run: %v\n", err)
		return cli.ExitUsage
	}
	if err := cli.ValidateFlags(fs, runFlagSpecs(&f)); err != nil {
		return cli.FlagError(stderr, "run", err)
	}
	cfg := properties.Config{
		Checks: f.checks, Seed: f.seed, Only: splitList(f.only), Skip: splitList(f.skip), Cases: splitList(f.cases),
		ShrinkTime: f.shrink, Context: ctx, Uncontrolled: f.uncontrolled, PCTDepth: f.pct,
		StopAtFirst: !f.all,
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "verify run: %s (flags --property, --skip, --cases)\n", strings.TrimPrefix(err.Error(), "properties: "))
		return cli.ExitUsage
	}
	cfg.Progress = progressLine(stderr)
	start := time.Now()
	fmt.Fprintf(stderr, "verify run: %s, %d cases per property\n", f.executor, f.checks)
	rep := properties.Check(newEx, cfg)
	if cli.IsTerminal(stderr) {
		fmt.Fprint(stderr, "\r\033[K")
	}

	interrupted := ctx.Err() != nil
	text := stdout
	if f.json {
		text = io.Discard // the report goes out as JSON at the end
	}
	for _, r := range rep.Results {
		switch {
		case r.Skipped != "":
			fmt.Fprintf(text, "%-22s skipped: %s\n", r.Property.Name, r.Skipped)
		case r.Verdict == checker.Violated && r.Standing != properties.ReportedHere:
			fmt.Fprintf(text, "%-22s VIOLATED: %s\n", r.Property.Name, r.State())
		case r.Verdict == checker.Violated:
			fmt.Fprintf(text, "%-22s VIOLATED after %d cases (%v)\n", r.Property.Name, r.Cases, r.Duration.Round(time.Millisecond))
		case r.Verdict == checker.Unknown && r.Runs == 0 && !interrupted:
			fmt.Fprintf(text, "%-22s not run (stopped at the first failure; --all runs every property)\n", r.Property.Name)
		case r.Verdict == checker.Holds:
			extra := ""
			if r.NoVerdict > 0 {
				extra = fmt.Sprintf("; %d stopped by a budget without a verdict", r.NoVerdict)
			}
			fmt.Fprintf(text, "%-22s holds (%d cases, %v%s)\n", r.Property.Name, r.Runs, r.Duration.Round(time.Millisecond), extra)
		default:
			fmt.Fprintf(text, "%-22s unknown (interrupted)\n", r.Property.Name)
		}
	}
	code := cli.ExitHolds
	written := map[*properties.Result]map[string]string{}
	for _, r := range rep.Results {
		if r.Verdict == checker.Violated {
			code = cli.ExitViolated
			if r.Standing == properties.ReportedHere {
				written[r] = printRunFailure(text, stderr, &f, r)
			}
		}
	}
	v := rep.Verdict()
	if code == cli.ExitHolds && (v == checker.Unknown || interrupted) {
		code = cli.ExitUnknown
	}
	if f.json {
		printRunJSON(stdout, &f, rep, code, interrupted, written, time.Since(start))
		return code
	}
	what := v.String()
	if interrupted {
		what += " (interrupted: the properties not run are unknown)"
	}
	fmt.Fprintf(stdout, "\n%s: %s in %v\n", f.executor, what, time.Since(start).Round(time.Millisecond))
	if code == cli.ExitHolds {
		fmt.Fprintf(stdout, "Try more cases with --checks %d, or another executor (--list).\n", min(f.checks*10, maxChecks))
	}
	return code
}

// runPropertyJSON is one property of verify run --json.
type runPropertyJSON struct {
	Name     string  `json:"name"`
	Protects string  `json:"protects"`
	Verdict  string  `json:"verdict"`
	Skipped  string  `json:"skipped,omitempty"`
	Cases    int     `json:"cases"`
	Runs     int     `json:"runs"`
	Seconds  float64 `json:"seconds"`
	Caught   string  `json:"caught,omitempty"`  // the check that failed
	Message  string  `json:"message,omitempty"` // what it says of the failure
	Detail   string  `json:"detail,omitempty"`
	Workload string  `json:"workload,omitempty"` // the shrunk workload
	Seed     uint64  `json:"seed,omitempty"`
	Trace    string  `json:"trace,omitempty"`
	Timeline string  `json:"timeline,omitempty"`
	Replay   string  `json:"replay,omitempty"`
}

// printRunJSON prints verify run --json: one object (docs/json-output.md).
func printRunJSON(w io.Writer, f *runFlags, rep *properties.Report, code int, interrupted bool, written map[*properties.Result]map[string]string, took time.Duration) {
	out := struct {
		Schema      int               `json:"schema"`
		Verdict     string            `json:"verdict"`
		Executor    string            `json:"executor"`
		Checks      int               `json:"checks"`
		Seconds     float64           `json:"seconds"`
		Interrupted bool              `json:"interrupted,omitempty"`
		Properties  []runPropertyJSON `json:"properties"`
	}{Schema: cli.JSONSchema, Verdict: cli.VerdictOf(code), Executor: f.executor, Checks: rep.Checks, Seconds: took.Seconds(), Interrupted: interrupted, Properties: []runPropertyJSON{}}
	for _, r := range rep.Results {
		p := runPropertyJSON{Name: r.Property.Name, Protects: r.Property.Protects(), Verdict: r.Verdict.String(), Skipped: r.Skipped,
			Cases: r.Cases, Runs: r.Runs, Seconds: r.Duration.Seconds()}
		if r.Verdict == checker.Violated {
			p.Caught, p.Message, p.Detail, p.Seed = r.Caught, r.Message, r.Detail, r.Seed
			if r.Counterexample != nil {
				p.Workload = r.Counterexample.String()
			}
			files := written[r]
			p.Trace, p.Timeline, p.Replay = files["trace"], files["timeline"], files["replay"]
		}
		out.Properties = append(out.Properties, p)
	}
	cli.PrintJSON(w, out, false)
}

// lookupExecutor finds a built-in executor or a catalogue entry.
func lookupExecutor(name string) (func() executor.Executor, error) {
	if n, ok := strings.CutPrefix(name, "broken/"); ok {
		for _, b := range broken.Catalogue() {
			if b.Name == n {
				return b.New, nil
			}
		}
		for _, b := range broken.Bases() {
			if b.Name == n {
				return b.New, nil
			}
		}
		return nil, fmt.Errorf("no broken executor %q (see %s run --list)", n, cli.SelfCommand())
	}
	if f, ok := executor.Builtin(name); ok {
		return f, nil
	}
	return nil, fmt.Errorf("unknown executor %q (want one of %s, or broken/NAME)", name, strings.Join(executor.BuiltinNames(), ", "))
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// progressLine returns a Progress callback that rewrites one status line on
// w at most every 200ms, and notes each failure as it is found.
// On a terminal; elsewhere (a log, a pipe) it prints a plain line at most
// every second.
func progressLine(w io.Writer) func(properties.Progress) {
	var mu sync.Mutex
	var last time.Time
	failed := map[string]bool{}
	clear, every, end := "\r\033[K", 200*time.Millisecond, ""
	if !cli.IsTerminal(w) {
		clear, every, end = "", time.Second, "\n"
	}
	return func(p properties.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Failed && !failed[p.Property] {
			failed[p.Property] = true
			fmt.Fprintf(w, "%s%s: failing case found after %d cases (%v); shrinking\n", clear, p.Property, p.Case, p.Elapsed.Round(time.Millisecond))
		}
		if time.Since(last) < every {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, "%s%s: case %d of %d (%v)%s", clear, p.Property, p.Case, p.Checks, p.Elapsed.Round(time.Second), end)
	}
}

// printRunFailure prints a failure, writes its trace and timeline, and
// returns what it wrote and the command that replays it, by kind ("trace",
// "timeline", "replay").
func printRunFailure(stdout, stderr io.Writer, f *runFlags, r *properties.Result) map[string]string {
	files := map[string]string{}
	p, _ := properties.Lookup(r.Caught)
	protects := r.Caught
	if p != nil {
		protects = p.Protects()
	}
	fmt.Fprintf(stdout, "\n%s (%s) violated: %s\n", r.Caught, protects, r.Message)
	fmt.Fprintf(stdout, "  found by the %s cases after %d cases, %v into the run\n", r.Property.Name, r.Cases, r.ToFailure.Round(time.Millisecond))
	fmt.Fprintf(stdout, "  shrunk workload (size %d):\n", r.Counterexample.Size())
	for _, l := range strings.Split(strings.TrimSpace(r.Counterexample.String()), "\n") {
		fmt.Fprintf(stdout, "    %s\n", l)
	}
	fmt.Fprintln(stdout, "  what happened:")
	for _, l := range strings.Split(strings.TrimSpace(r.Detail), "\n") {
		fmt.Fprintf(stdout, "    %s\n", l)
	}
	if len(r.Consequences) > 0 {
		fmt.Fprintln(stdout, "  then, as consequences:")
		for _, c := range r.Consequences {
			fmt.Fprintf(stdout, "    - %s\n", c)
		}
	}
	out, outErr := f.out, error(nil)
	if out == "" {
		out, outErr = cli.DefaultOutDir("run")
	}
	if h, events, ok := r.Observation.Trace(); ok && len(events) > 0 && outErr != nil {
		fmt.Fprintf(stderr, "verify run: writing the trace: %s\n", cli.Term(outErr.Error()))
	} else if ok && len(events) > 0 {
		base := filepath.Join(out, fmt.Sprintf("run-%s-%s", strings.ReplaceAll(f.executor, "/", "-"), r.Property.Name))
		jsonl, html := base+".jsonl", base+".html"
		if err := traces.WriteFile(jsonl, h, events); err != nil {
			fmt.Fprintf(stderr, "verify run: writing the trace: %s\n", cli.Term(err.Error()))
		} else {
			files["trace"] = jsonl
			q := traces.ShellQuote(jsonl)
			fmt.Fprintf(stdout, "  trace: %s (%d events; %s check %s, %s replay %s)\n", cli.Term(jsonl), len(events), cli.SelfCommand(), q, cli.SelfCommand(), q)
		}
		mark := runMark(stdout, h, events, r.Caught+": "+firstLine(r.Detail))
		if err := cli.WriteFile(html, func(w io.Writer) error { return picture.WriteHTML(w, h, events, mark) }); err != nil {
			fmt.Fprintf(stderr, "verify run: writing the timeline: %s\n", cli.Term(err.Error()))
		} else {
			files["timeline"] = html
			fmt.Fprintf(stdout, "  timeline: %s\n", cli.Term(html))
		}
	} else {
		fmt.Fprintln(stdout, "  (the executor reports no events: no trace to write)")
	}
	if r.Seed != 0 {
		how := "the same workload; the interleaving is the Go scheduler's, so a race may need a few tries"
		if r.Observation != nil && r.Observation.Controlled {
			how = "the first failing case, workload and schedule, exactly; then the same shrinking, within --shrink-time"
		}
		if o := r.Observation; o != nil && o.Controlled {
			fmt.Fprintf(stdout, "  schedule: %d decisions, checksum %016x (first failing case, before shrinking: checksum %016x)\n", o.Decisions, o.Checksum, r.FirstChecksum)
		}
		files["replay"] = fmt.Sprintf("%s run --executor %s%s --cases %s --seed %d --checks 1", cli.SelfCommand(), traces.ShellQuote(f.executor), selectFlags(f), traces.ShellQuote(r.Property.Name), r.Seed)
		fmt.Fprintf(stdout, "  replay it (%s):\n    %s\n", how, files["replay"])
	}
	return files
}

// selectFlags repeats the property selection of a run, for its replay
// command: the same checks must run on the replayed case.
func selectFlags(f *runFlags) string {
	s := ""
	if f.only != "" {
		s += " --property " + traces.ShellQuote(f.only)
	}
	if f.skip != "" {
		s += " --skip " + traces.ShellQuote(f.skip)
	}
	if f.uncontrolled {
		s += " --uncontrolled"
	}
	if f.pct > 0 {
		s += fmt.Sprintf(" --pct %d", f.pct)
	}
	return s
}

func printRunList(w io.Writer) {
	fmt.Fprintln(w, "Properties:")
	for _, p := range properties.Properties() {
		fmt.Fprintf(w, "  %-20s %-28s %s\n", p.Name, p.Protects(), p.Doc)
	}
	fmt.Fprintln(w, "\nBuilt-in executors:")
	for _, n := range executor.BuiltinNames() {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintln(w, "\nBroken executors (each must fail):")
	for _, b := range broken.Catalogue() {
		fmt.Fprintf(w, "  broken/%-22s %s\n", b.Name, b.Bug)
	}
	fmt.Fprintln(w, "\nTheir correct bases (each must hold):")
	for _, b := range broken.Bases() {
		fmt.Fprintf(w, "  broken/%-22s %s\n", b.Name, b.Base)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Bounds of verify run's and verify cover's flags that size work or
// memory. Each is far above any useful value and far below what would
// exhaust a machine.
const (
	maxChecks   = 10_000_000             // run --checks: cases per property
	maxPCTDepth = properties.MaxPCTDepth // run --pct, cover --pct-depth: a PCT depth above the steps of a case means nothing
	maxRuns     = 1 << 40                // cover --runs
	maxPreempt  = 1000                   // cover --preemptions: far beyond any search that ends
)

// runFlagSpecs is the table of verify run's numeric flags.
func runFlagSpecs(f *runFlags) []cli.FlagSpec {
	return []cli.FlagSpec{
		{Name: "checks", Min: 1, Max: maxChecks},
		{Name: "pct", Min: 0, Max: maxPCTDepth, Applies: cli.OnlyWith(func() bool { return !f.uncontrolled }, "on controlled interleavings (not with --uncontrolled)")},
		{Name: "shrink-time", Min: 0, Max: cli.MaxDuration},
	}
}
