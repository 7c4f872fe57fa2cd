package gotest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/instrument"
	"github.com/execspec/execspec/instrument/harness"
	"github.com/execspec/execspec/instrument/rt"
)

// Test is verify test: a package's tests under controlled schedules.
var Test = cli.Command{Name: "test", Summary: "run a package's tests under controlled schedules, its dependencies rewritten at build time", Run: runTest}

type testFlags struct {
	instrument []string
	strategy   string
	depth      int
	runs       int
	seed       uint64
	run        string
	replay     string
	out        string
	timeout    time.Duration
	time       time.Duration // --time: each test's budget (0: none)
	maxSteps   int
	json       bool
	quiet      bool
	verbose    bool
	keep       bool
	noCache    bool
	early      bool
	stdSync    bool
}

type listFlag struct{ dst *[]string }

func (l listFlag) String() string {
	if l.dst == nil {
		return ""
	}
	return strings.Join(*l.dst, ",")
}

func (l listFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l.dst = append(*l.dst, p)
		}
	}
	return nil
}

func testFlagSpecs(f *testFlags) []cli.FlagSpec {
	// notInReplay: the flag has no meaning with --replay, for the reason why.
	notInReplay := func(why string) func() string {
		return func() string {
			if f.replay != "" {
				return why
			}
			return ""
		}
	}
	return []cli.FlagSpec{
		{Name: "pct-depth", Min: 1, Max: 20, Applies: cli.OnlyWith(func() bool { return f.strategy == "pct" }, "--strategy pct")},
		{Name: "max-steps", Min: 0, Max: 1 << 30},
		{Name: "timeout", Min: int64(time.Second), Max: int64(1000 * time.Hour)},
		{Name: "time", Min: int64(100 * time.Millisecond), Max: int64(1000 * time.Hour), ExplicitOnly: true, Applies: notInReplay("a replay makes one run")},
		{Name: "runs", Applies: notInReplay("a replay makes one run"), Min: 1, Max: 100_000_000},
		{Name: "strategy", Applies: notInReplay("a replay makes the schedule's choices")},
		{Name: "seed", Applies: notInReplay("a replay makes the schedule's choices")},
	}
}

// testReport is the result of verify test, printed with --json.
type testReport struct {
	Packages     []string          `json:"packages"`
	Instrumented []string          `json:"instrumented"`
	Rewrites     map[string]int    `json:"rewrites"`
	Uncontrolled []string          `json:"uncontrolled"`
	StdSync      bool              `json:"std_sync,omitempty"` // the standard library's sync is controlled
	Strategy     string            `json:"strategy"`
	Seed         uint64            `json:"seed"`
	Runs         int               `json:"runs_per_test"`           // 0: no bound (--time alone)
	Time         string            `json:"time_per_test,omitempty"` // --time, e.g. "10m0s"
	Tests        []harness.Outcome `json:"tests"`
	Unfinished   []string          `json:"unfinished,omitempty"` // tests that started and had not ended when the run stopped
	Interrupted  bool              `json:"interrupted,omitempty"`
	Seconds      float64           `json:"seconds"`
}

const testHelp = `Usage: verify test [flags] [PACKAGE...]

Rewrites the packages under test and those named by --instrument so that their
goroutines, channel operations, selects, locks and atomics pass through a
scheduler, hands them to go test -overlay (nothing is written to your tree or
the module cache), and runs each TestXxx --runs times, each run in a
testing/synctest bubble with one goroutine running at a time. A deadlock, a
leaked goroutine, a panic or a failed test is reported with its blocked
goroutines, and its schedule is saved: the printed command replays it exactly.

With --time each test keeps starting runs until that long has passed (a run
under way is finished), then stops cleanly: "passed N runs in 10m" and exit 0
if none failed. --runs, when given too, still bounds the runs; without it they
are not bounded. Progress is shown every 10 seconds. --timeout stays the
wall-clock limit that kills a test that never ends; when it is not given it
grows to 10m more than --time for each test.

Examples:
  verify test ./pool --instrument github.com/panjf2000/ants/v2/... --strategy pct --runs 1000 --run TestTune
  verify test ./pool --instrument github.com/panjf2000/ants/v2/... --run '^TestTune$' --time 10m
  verify test ./pool --instrument github.com/panjf2000/ants/v2/... --run '^TestTune$' --replay ~/.cache/execspec/schedules/TestTune.schedule
`

const testExits = `Exit codes: 0 every run passed, 1 a run failed, 2 usage, a package that does not
build, a pattern that matches nothing, a --replay file that is no schedule, an
--out that is no directory, or an output that nobody reads any more (| head),
3 interrupted (while building too) or timed out.
`

func runTest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f testFlags
	fs := cli.NewFlagSet("verify test", stderr, testHelp, testExits)
	fs.Var(listFlag{&f.instrument}, "instrument", "also rewrite these packages (comma-separated patterns: a module's package such as github.com/panjf2000/ants/v2, ./..., ...)")
	fs.StringVar(&f.strategy, "strategy", "random", "how schedules are chosen: random or pct")
	fs.IntVar(&f.depth, "pct-depth", 3, "PCT's bug depth (--strategy pct)")
	fs.IntVar(&f.runs, "runs", 100, "controlled runs of each test")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the schedules")
	fs.StringVar(&f.run, "run", "", "run only the tests matching this regular expression (as go test -run)")
	fs.StringVar(&f.replay, "replay", "", "replay this schedule file (printed with a failure) instead of searching")
	fs.StringVar(&f.out, "out", "", "directory for the schedules of failures (default: execspec/schedules in the user's cache directory)")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "wall-clock limit of the whole go test run (a test that never ends); with --time, 10m more than --time for each test")
	fs.DurationVar(&f.time, "time", 0, "keep starting runs of each test until this long has passed, e.g. 10m (--runs, if given, still bounds them; without it they are not bounded)")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "yield points of one run before it is stopped as unknown (0: 100000)")
	fs.BoolVar(&f.json, "json", false, "print the report as JSON on stdout")
	fs.BoolVar(&f.quiet, "q", false, "no progress on stderr")
	fs.BoolVar(&f.verbose, "v", false, "print what each test logged (t.Log), as go test -v, also for the tests that passed")
	fs.BoolVar(&f.keep, "keep", false, "keep the rewritten files and the overlay (their directory is printed)")
	fs.BoolVar(&f.early, "early-timers", true, "let timers fire while other goroutines could run (they are then slow): reaches bugs that need a timeout to expire before another goroutine gets to run; the timers the test's own code makes (in its _test.go files) never fire so, and the pool suite leaves the time so passed out of its progress bound; --early-timers=false lets time pass only once every goroutine is blocked")
	fs.BoolVar(&f.stdSync, "std-sync", false, "overlay the standard library's sync so that its Mutex, RWMutex, WaitGroup, Once and Cond, called by a controlled goroutine, are yield points whatever package makes the call (the standard library, packages not instrumented); the first build compiles the standard packages that import sync again (go's build cache keeps them)")
	fs.BoolVar(&f.noCache, "no-cache", false, "rewrite afresh in a temporary directory instead of reusing a build of the same sources kept in the user's cache directory")
	// Flags may follow the packages: parse in rounds.
	var pkgs []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return cli.ExitHolds
			}
			return cli.ExitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		if strings.TrimSpace(fs.Arg(0)) == "" {
			// go list would take it for the current directory.
			return cli.FlagError(stderr, "test", fmt.Errorf("an empty package path: expected a package pattern such as . or ./pool/..."))
		}
		pkgs = append(pkgs, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	if err := cli.ValidateFlags(fs, testFlagSpecs(&f)); err != nil {
		return cli.FlagError(stderr, "test", err)
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if f.time > 0 && !given["runs"] {
		f.runs = 0 // the budget ends the runs
	}
	if f.strategy != "random" && f.strategy != "pct" {
		return cli.FlagError(stderr, "test", fmt.Errorf("--strategy %q: expected random or pct", f.strategy))
	}
	if f.run != "" {
		if _, err := regexp.Compile(f.run); err != nil {
			return cli.FlagError(stderr, "test", fmt.Errorf("--run: %v", err))
		}
	}
	if f.replay != "" {
		abs, err := checkSchedule(f.replay)
		if err != nil {
			fmt.Fprintf(stderr, "verify test: --replay: %s\n", cli.Term(err.Error()))
			return cli.ExitUsage
		}
		f.replay = abs
		if f.run == "" {
			// Another test replayed under this schedule diverges from it:
			// that would be reported as its failure.
			if f.run = replayedTest(abs); f.run == "" {
				return cli.FlagError(stderr, "test", fmt.Errorf("--replay %s: give --run the test it was saved for (its name does not say which; any other test diverges from its choices)", cli.Term(abs)))
			}
			if !f.quiet {
				fmt.Fprintf(stderr, "verify test: replaying only the tests matching %s (the schedule's name; --run to choose)\n", f.run)
			}
		}
	}
	if f.out != "" {
		if err := checkOutDir(f.out); err != nil {
			fmt.Fprintf(stderr, "verify test: --out: %s\n", cli.Term(err.Error()))
			return cli.ExitUsage
		}
	}
	if v, err := goVersion(); err != nil {
		fmt.Fprintf(stderr, "verify test: %v\n", err)
		return cli.ExitUsage
	} else if !supportedGo(v) {
		fmt.Fprintf(stderr, "verify test: %s is not supported: controlled runs need go test -overlay, testing/synctest and the channel layout of Go 1.25 or 1.26\n", v)
		return cli.ExitUsage
	}
	if f.out == "" {
		d, err := cli.DefaultOutDir("schedules")
		if err != nil {
			fmt.Fprintf(stderr, "verify test: %s\n", cli.Term(err.Error()))
			return cli.ExitUsage
		}
		f.out = d
	}
	start := time.Now()
	work, err := os.MkdirTemp("", "execspec-test-")
	if err != nil {
		fmt.Fprintf(stderr, "verify test: %v\n", err)
		return cli.ExitUsage
	}
	defer os.RemoveAll(work)
	// Builds are kept by the content of their inputs in the user's cache
	// directory: an unchanged build is neither rewritten again nor
	// compiled again (its files keep their paths for go's build cache).
	cache, cerr := cli.DefaultOutDir("builds")
	if cerr != nil || f.noCache {
		cache = ""
	}
	cwd, _ := os.Getwd()
	if !f.quiet {
		fmt.Fprintf(stderr, "verify test: rewriting %s", strings.Join(pkgs, " "))
		if len(f.instrument) > 0 {
			fmt.Fprintf(stderr, " and %s", strings.Join(f.instrument, " "))
		}
		fmt.Fprintln(stderr, " ...")
	}
	buildDir := filepath.Join(work, "build")
	if f.keep && cache == "" {
		if buildDir, err = os.MkdirTemp("", "execspec-build-"); err != nil {
			fmt.Fprintf(stderr, "verify test: %v\n", err)
			return cli.ExitUsage
		}
	}
	b, err := interruptible(ctx, func() (*instrument.Build, error) {
		return instrument.Instrument(instrument.Config{Dir: cwd, Tests: pkgs, Instrument: f.instrument, Out: buildDir, Cache: cache, StdSync: f.stdSync})
	})
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "verify test: interrupted while rewriting and building %s (%.1fs): no test ran\n", strings.Join(pkgs, " "), time.Since(start).Seconds())
		return cli.ExitUnknown
	}
	if err != nil {
		fmt.Fprintf(stderr, "verify test: %v\n", err)
		return cli.ExitUsage
	}
	if f.keep {
		fmt.Fprintf(stderr, "verify test: the rewritten files and the overlay are in %s\n", filepath.Dir(b.Overlay))
	}
	rep := testReport{Packages: b.Tested, Instrumented: b.Packages, Rewrites: b.Counts, Uncontrolled: b.Uncontrolled, StdSync: b.StdSync,
		Strategy: f.strategy, Seed: f.seed, Runs: f.runs}
	if f.replay != "" {
		rep.Strategy, rep.Runs = "replay", 1
	} else if f.time > 0 {
		rep.Time = f.time.String()
		if !given["timeout"] {
			// A budget per test: the wall-clock limit covers every test
			// the packages have (-run may select fewer).
			f.timeout = 10*time.Minute + time.Duration(max(b.Counts[instrument.RuleTest], 1))*f.time
		}
	}
	if !f.quiet {
		cached := ""
		if b.Cached {
			cached = ", unchanged since the last build"
		}
		fmt.Fprintf(stderr, "verify test: %d files rewritten in %s (%s%s) in %.1fs\n", len(b.Files), strings.Join(b.Packages, " "), countsText(b.Counts), cached, time.Since(start).Seconds())
		if len(b.Uncontrolled) > 0 && b.StdSync {
			fmt.Fprintf(stderr, "verify test: not controlled (their goroutines and channels run outside the scheduler; their locks of package sync are controlled): %s, and the standard library\n", strings.Join(b.Uncontrolled, " "))
		} else if len(b.Uncontrolled) > 0 {
			fmt.Fprintf(stderr, "verify test: not controlled (their goroutines, channels and locks run outside the scheduler): %s, and the standard library\n", strings.Join(b.Uncontrolled, " "))
		}
	}
	reportFile := filepath.Join(work, "report.jsonl")
	env := append(os.Environ(),
		harness.EnvStrategy+"="+rep.Strategy,
		harness.EnvSeed+"="+strconv.FormatUint(f.seed, 10),
		harness.EnvRuns+"="+strconv.Itoa(f.runs),
		harness.EnvDepth+"="+strconv.Itoa(f.depth),
		harness.EnvOut+"="+f.out,
		harness.EnvReport+"="+reportFile,
		harness.EnvMaxSteps+"="+strconv.Itoa(f.maxSteps),
		harness.EnvCommand+"="+replayCommand(pkgs, f, "%s"),
	)
	if rep.Time != "" {
		env = append(env, harness.EnvTime+"="+rep.Time)
	}
	// Set either way: an EXECSPEC_EARLY_TIMERS=1 left in the caller's
	// environment must not override --early-timers=false.
	env = append(env, rt.EnvEarlyTimers+"="+map[bool]string{false: "0", true: "1"}[f.early])
	if f.replay != "" {
		env = append(env, harness.EnvSchedule+"="+f.replay)
	}
	goArgs := append([]string{"test"}, b.Flags()...)
	goArgs = append(goArgs, "-count=1", "-v", "-timeout="+f.timeout.String())
	if f.run != "" {
		goArgs = append(goArgs, "-run", f.run)
	}
	goArgs = append(goArgs, pkgs...)
	cmd := exec.Command("go", goArgs...)
	cmd.Env = env
	inGroup(cmd)
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "verify test: %v\n", err)
		return cli.ExitUsage
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "verify test: %v\n", err)
		return cli.ExitUsage
	}
	stop := context.AfterFunc(ctx, func() { killGroup(cmd) })
	defer stop()
	var output testOutput
	var started, progress []string // progress: the last line of each test with --time
	// Read to the end whatever comes (a line of 20 MiB stopped a
	// bufio.Scanner here, and the test binary then blocked for ever
	// writing to the pipe).
	rerr := readLines(pipe, maxTestLine, func(line string) {
		output.add(line)
		if _, p, ok := strings.Cut(line, harness.ProgressPrefix); ok {
			name, _, _ := strings.Cut(p, ":")
			progress = slices.DeleteFunc(progress, func(l string) bool { return strings.HasPrefix(l, name+":") })
			progress = append(progress, p)
			if !f.quiet {
				fmt.Fprintf(stderr, "verify test: %s (%.0fs)\n", p, time.Since(start).Seconds())
			}
			return
		}
		if name, ok := strings.CutPrefix(line, "=== RUN"); ok {
			name = strings.TrimSpace(name)
			if !strings.Contains(name, "/") {
				started = append(started, name)
			}
			if !f.quiet {
				fmt.Fprintf(stderr, "verify test: %s (%.0fs)\n", name, time.Since(start).Seconds())
			}
		}
	})
	if rerr != nil {
		// The pipe broke: the test binary must not block on it.
		killGroup(cmd)
	}
	werr := cmd.Wait()
	rep.Seconds = time.Since(start).Seconds()
	rep.Tests = readOutcomes(reportFile)
	rep.Unfinished = unfinished(started, rep.Tests, output.String())
	out := output.String()
	code := cli.ExitHolds
	switch {
	case ctx.Err() != nil:
		rep.Interrupted = true
		fmt.Fprintln(stderr, "verify test: interrupted; what was found so far:")
		for _, p := range progress {
			fmt.Fprintf(stderr, "verify test: %s (the last progress before the interrupt)\n", p)
		}
		code = cli.ExitUnknown
	case strings.Contains(out, "panic: test timed out after"):
		fmt.Fprintf(stderr, "verify test: a test did not end within --timeout %v (a goroutine outside control that never blocks, or a loop without a yield point):\n%s", f.timeout, tail(out, 60))
		code = cli.ExitUnknown
	case strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"):
		fmt.Fprintf(stderr, "verify test: the instrumented build failed:\n%s", tail(out, 40))
		return cli.ExitUsage
	case strings.Contains(out, "execspec/rt: controlled goroutine"), // blocked outside, or no yield point for long
		strings.Contains(out, "execspec/rt: the scheduler waited"): // rt's settle watchdog
		fmt.Fprintf(stderr, "verify test: %s", tail(out, 60))
		code = cli.ExitUnknown
	case werr != nil && len(failures(rep.Tests)) == 0:
		if strings.Contains(out, "unexpected call to os.Exit") || !strings.Contains(out, "--- FAIL") {
			fmt.Fprintf(stderr, "verify test: the test binary ended before its tests did (os.Exit, a crash or a failure outside control):\n%s", tail(out, 40))
			return cli.ExitUsage
		}
		fmt.Fprintf(stderr, "verify test: go test failed:\n%s", tail(out, 40))
		code = cli.ExitViolated
	}
	if len(rep.Tests) == 0 && code == cli.ExitHolds {
		fmt.Fprintf(stderr, "verify test: no test ran under control (does -run match a TestXxx of %s?)\n", strings.Join(pkgs, " "))
		return cli.ExitUsage
	}
	for _, o := range failures(rep.Tests) {
		if o.Kind == harness.KindExit {
			fmt.Fprintf(stderr, "verify test: %s calls os.Exit: a test under control must return (it runs many times in one process)\n", o.Test)
			return cli.ExitUsage
		}
	}
	if f.verbose {
		for _, o := range rep.Tests {
			fmt.Fprintf(stderr, "%s logged:\n%s", o.Test, testLog(out, o.Test))
		}
	}
	for _, o := range failures(rep.Tests) {
		code = cli.ExitViolated
		fmt.Fprintf(stderr, "\n%s: %s in run %d of %s\n%s\n", o.Test, o.Kind, o.FailedRun, runsText(rep), indent(o.Error))
		if o.Kind == "fail" && !f.verbose {
			fmt.Fprint(stderr, testLog(out, o.Test))
		}
		if o.Early != "" {
			fmt.Fprintf(stderr, "%s\n", o.Early)
		}
		if o.Schedule != "" {
			fmt.Fprintf(stderr, "replay:\n\t%s\n", replayCommand(pkgs, f, o.Schedule)+" --run '^"+o.Test+"$'")
		}
		if f.replay != "" && o.Replayed {
			fmt.Fprintln(stderr, "the replay followed the schedule and reproduced its checksum")
		}
	}
	if !f.quiet {
		passed := 0
		for _, o := range rep.Tests {
			if o.FailedRun == 0 {
				passed++
			}
		}
		stopped := ""
		if len(rep.Unfinished) > 0 {
			stopped = fmt.Sprintf(", %d did not end (%s)", len(rep.Unfinished), strings.Join(rep.Unfinished, ", "))
		}
		fmt.Fprintf(stderr, "verify test: %d tests under control, %d passed every run, %d failed%s (%.1fs)\n", len(rep.Tests), passed, len(rep.Tests)-passed, stopped, rep.Seconds)
		if rep.Time != "" {
			for _, o := range rep.Tests {
				if o.FailedRun == 0 {
					fmt.Fprintf(stderr, "verify test: %s passed %d runs in %v (--time %s)\n", o.Test, o.Runs, time.Duration(o.Seconds*float64(time.Second)).Round(time.Second), rep.Time)
				}
			}
		}
	}
	if f.json {
		cli.PrintJSON(stdout, rep, true)
	}
	return code
}

// unfinished returns the tests of started (top-level names, in order)
// that neither reported an outcome nor ended in go test's output: the
// ones a timeout, an interrupt or a crash stopped.
func unfinished(started []string, outcomes []harness.Outcome, out string) []string {
	var left []string
	for _, name := range started {
		ended := strings.Contains(out, "--- PASS: "+name+" ") || strings.Contains(out, "--- FAIL: "+name+" ") || strings.Contains(out, "--- SKIP: "+name+" ")
		if ended || slices.ContainsFunc(outcomes, func(o harness.Outcome) bool { return o.Test == name }) {
			continue
		}
		left = append(left, name)
	}
	return left
}

func runsText(r testReport) string {
	if r.Strategy == "replay" {
		return "1 (replay)"
	}
	if r.Runs == 0 {
		return fmt.Sprintf("those of --time %s (%s, seed %d)", r.Time, r.Strategy, r.Seed)
	}
	return fmt.Sprintf("%d (%s, seed %d)", r.Runs, r.Strategy, r.Seed)
}

// testLog returns what test logged in the go test -v output, without the
// lines of the runtime's own report: its t.Log lines, and what the code
// under test wrote to the binary's standard output or error while it ran
// (a println in a library one is debugging), as go test -v shows them.
func testLog(out, test string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "=== RUN") || strings.HasPrefix(line, "=== CONT"):
			f := strings.Fields(line)
			in = len(f) == 3 && f[2] == test
		case strings.HasPrefix(line, "--- "):
			in = false
		case in && strings.HasPrefix(line, "    ") && !strings.Contains(line, "schedule saved; replay it with") && !strings.Contains(line, "harness.go:") && !strings.Contains(line, harness.ProgressPrefix) && !strings.HasPrefix(line, "        \t"):
			b.WriteString(line[2:])
			b.WriteByte('\n')
		case in && line != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") && !goTestLine(line):
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// goTestLine reports whether an unindented line of go test -v output is
// go test's own (a test's start, end or verdict, a package's result).
func goTestLine(line string) bool {
	for _, p := range []string{"=== ", "--- ", "PASS", "FAIL", "ok  \t", "coverage: ", "panic: ", "goroutine ", "exit status "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

func failures(os []harness.Outcome) []harness.Outcome {
	var f []harness.Outcome
	for _, o := range os {
		if o.FailedRun > 0 {
			f = append(f, o)
		}
	}
	return f
}

func readOutcomes(path string) []harness.Outcome {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []harness.Outcome
	for _, line := range bytes.Split(b, []byte("\n")) {
		var o harness.Outcome
		if json.Unmarshal(line, &o) == nil && o.Test != "" {
			out = append(out, o)
		}
	}
	return out
}

func replayCommand(pkgs []string, f testFlags, schedule string) string {
	s := "verify test " + strings.Join(pkgs, " ")
	if len(f.instrument) > 0 {
		s += " --instrument " + strings.Join(f.instrument, ",")
	}
	if !f.early {
		s += " --early-timers=false"
	}
	if f.stdSync {
		s += " --std-sync"
	}
	return s + " --replay " + schedule
}

func countsText(m map[string]int) string {
	var parts []string
	for _, r := range []string{instrument.RuleGo, instrument.RuleSend, instrument.RuleRecv, instrument.RuleRecv2, instrument.RuleClose, instrument.RuleRange, instrument.RuleSelect, instrument.RuleSync, instrument.RuleAtomic, instrument.RuleGosched, instrument.RuleGoschedLoop, instrument.RuleSpinCAS, instrument.RuleSleep, instrument.RuleTestTimer, instrument.RuleRand, instrument.RuleMap, instrument.RuleTest} {
		if m[r] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, m[r]))
		}
	}
	return strings.Join(parts, ", ")
}

func indent(s string) string { return "\t" + strings.ReplaceAll(s, "\n", "\n\t") }

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n") + "\n"
}

func goVersion() (string, error) {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION: %v (is the go command on PATH?)", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func supportedGo(v string) bool {
	for _, ok := range []string{"go1.25", "go1.26"} {
		if v == ok || strings.HasPrefix(v, ok+".") || strings.HasPrefix(v, ok+"rc") {
			return true
		}
	}
	return false
}

// maxSchedule bounds the size of a schedule file that --replay reads: a
// run of the default 100,000 steps writes well under a megabyte.
const maxSchedule = 256 << 20

// checkSchedule checks, before anything is built, that name is a
// schedule file this build can replay: a regular file (a named pipe would
// block the test binary that opens it, a directory cannot be read), of a
// sane size, that parses as a schedule of a known format version. It
// returns its absolute path.
func checkSchedule(name string) (string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", err
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("%s: %s, not a schedule file (verify test prints the path of the schedule it saves with a failure)", abs, fileKind(st.Mode()))
	case st.Size() > maxSchedule:
		return "", fmt.Errorf("%s: %d bytes, more than a schedule file holds (at most %d MiB)", abs, st.Size(), maxSchedule>>20)
	}
	if strings.HasSuffix(abs, ".fail") {
		return abs, nil // a rapid failfile of the executor suite (properties.Run), which reads it
	}
	if _, _, err := harness.LoadSchedule(abs); err != nil {
		return "", errors.New(strings.TrimPrefix(err.Error(), "execspec/rt: "))
	}
	return abs, nil
}

// replayedTest returns a -run pattern for the test a schedule or rapid
// failfile was saved for, read from its name, or "" if the name does not
// say: rt saves a test's schedule as NAME.schedule (a suite's finding as
// NAME.FINDING.schedule) with every character outside [A-Za-z0-9.-] made
// '_', and rapid its failfiles as NAME-DATE-....fail.
func replayedTest(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".schedule", ".fail"} {
		if name, ok := strings.CutSuffix(base, ext); ok {
			name, _, _ = strings.Cut(name, ".")
			name, _, _ = strings.Cut(name, "-")
			if !testName.MatchString(name) {
				return ""
			}
			// '_' stands for itself or for a character it replaced.
			return "^" + strings.ReplaceAll(name, "_", ".") + "$"
		}
	}
	return ""
}

var testName = regexp.MustCompile(`^Test[A-Za-z0-9_]*$`)

// checkOutDir checks that the directory for the schedules of failures is
// one, or can be made: a failure found after minutes of runs must not
// lose its schedule to a bad path.
func checkOutDir(dir string) error {
	st, err := os.Stat(dir)
	if err == nil && !st.IsDir() {
		return fmt.Errorf("%s: %s, not a directory (the schedules of failures are written into it)", dir, fileKind(st.Mode()))
	}
	if err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: the directory for the schedules of failures cannot be made: %w", dir, err)
	}
	return nil
}

// fileKind names what a path is, for an error.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "a file of mode " + m.String()
}

// interruptible runs f, which does not observe ctx (the rewriting and the
// build of the packages, a minute or more the first time with
// --std-sync), and returns early once ctx is done, so that Ctrl-C is
// obeyed within moments in every phase. f's work is then abandoned: the
// process is about to exit, and the go commands it started end with the
// terminal's interrupt or run to their end in go's cache.
func interruptible[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
