package modelcheck

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/explore"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
	"github.com/execspec/execspec/traces/picture"
)

// Model is verify model: the rules model-checked on every interleaving.
var Model = cli.Command{Name: "model", Summary: "model-check the rules: every interleaving of a small configuration", Run: runModel}

type modelFlags struct {
	cfg        model.Config
	policy     string
	variant    string
	property   string
	invariants string
	priorities string
	symmetry   bool
	json       bool
	list       bool
	out        string
	maxStates  int64
	maxMemMiB  int64
	timeout    time.Duration
	parallel   int
	quiet      bool
	scale      scaleFlags // model_scale.go
}

// modelHelp is what `verify model -h` prints before the flags; modelExits, after them.
const modelHelp = `usage: verify model [flags]

Model-checks the scheduling rules on every interleaving of a small configuration:
every reachable state, every invariant, and liveness under weak fairness.

Examples:
  verify model --workers 3 --tasks 4 --pendings 2 --property all
  verify model --variant lost-wakeup
  verify model --policy priority --variant no-aging --endless --workers 1 --tasks 2 --property fairness
`

const modelExits = `Exit codes: 0 holds, 1 violated, 2 usage error, 3 unknown (budget spent or interrupted).
`

func modelFlagSet(stderr io.Writer, f *modelFlags) *flag.FlagSet {
	fs := cli.NewFlagSet("verify model", stderr, modelHelp, modelExits)
	c := &f.cfg
	fs.StringVar(&f.policy, "policy", "worksteal", "policy: fifo, worksteal, priority, timeslice, retry")
	fs.IntVar(&c.Workers, "workers", 2, "number of workers `W`")
	fs.IntVar(&c.Tasks, "tasks", 3, "number of tasks `T`")
	fs.IntVar(&c.Pendings, "pendings", 1, "Pending results of each future before Ready (`K`)")
	fs.BoolVar(&c.Endless, "endless", false, "futures that never finish and are woken again after every poll (for fairness)")
	fs.IntVar(&c.Wakes, "wakes", 2, "wakes the event source may make per registered waker")
	fs.IntVar(&c.LocalCap, "local-cap", 2, "capacity of each worker's local deque (worksteal)")
	fs.BoolVar(&c.OwnerFIFO, "owner-fifo", false, "the owner pops the head of its deque (FIFO) instead of the tail (LIFO) (worksteal)")
	fs.BoolVar(&c.StealHalf, "steal-half", false, "a thief takes half of the victim's deque (worksteal)")
	fs.IntVar(&c.GlobalInterval, "global-interval", 0, "every `N`th take looks at the global queue first; 0 never (worksteal)")
	fs.StringVar(&f.priorities, "priorities", "", "comma-separated task priorities, higher first (priority; default: task t has priority t-1)")
	fs.IntVar(&c.Aging, "aging", 0, "a task passed over `N` times runs next (priority; default 2)")
	fs.IntVar(&c.Slice, "slice", 0, "re-polls in a row of a task woken during its poll (timeslice; default 1)")
	fs.IntVar(&c.Retries, "retries", 0, "re-runs of a failed task from a fresh future (retry; default 1)")
	fs.IntVar(&c.Failures, "failures", 0, "failing attempts of each task (retry; default 1)")
	fs.StringVar(&f.variant, "variant", "", "a deliberately broken rule (see --list)")
	fs.StringVar(&f.property, "property", "safety", "safety, eventually-done, woken-polled, fairness, or all")
	fs.StringVar(&f.invariants, "invariants", "all", "invariants to check: all, none, or a comma-separated list")
	fs.BoolVar(&f.symmetry, "symmetry", false, "symmetry reduction: one state per class of interchangeable workers and tasks (safety)")
	fs.BoolVar(&f.json, "json", false, "print one JSON object per property instead of text")
	fs.BoolVar(&f.list, "list", false, "list the rules, invariants, properties and variants, and exit")
	fs.StringVar(&f.out, "out", "", "directory for counterexample traces and timelines (default: the user's cache directory, execspec/counterexamples, reused from run to run)")
	fs.Int64Var(&f.maxStates, "max-states", 0, "state budget; the verdict is unknown when it is spent (0: none)")
	fs.Int64Var(&f.maxMemMiB, "max-memory", 8192, "memory budget in MiB for the state store (0: none)")
	fs.DurationVar(&f.timeout, "timeout", 0, "time budget, e.g. 30s (0: none)")
	fs.IntVar(&f.parallel, "parallel", 0, "exploring goroutines (0: one per core)")
	fs.BoolVar(&f.quiet, "q", false, "no progress on stderr")
	f.scale.register(fs)
	return fs
}

func runModel(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f modelFlags
	fs := modelFlagSet(stderr, &f)
	if code, ok := cli.ParseNoArgs(fs, args, stderr); !ok {
		return code
	}
	if err := checkModelFlags(fs, &f); err != nil {
		return cli.FlagError(stderr, "model", err)
	}
	if f.list {
		printModelList(stdout)
		return cli.ExitHolds
	}
	cfg, props, opts, err := f.resolve()
	if err != nil {
		fmt.Fprintf(stderr, "verify model: %v\n", err)
		return cli.ExitUsage
	}
	code := cli.ExitHolds
	if !f.quiet && !f.json {
		opts.Progress = progressPrinter(stderr, f.timeout, f.maxStates)
	}
	if f.scale.search() {
		return runSearch(ctx, &f, cfg, props, opts, stdout, stderr) // model_scale.go
	}
	// One exploration for every property (explore.ExploreAll).
	rs, err := explore.ExploreAll(ctx, cfg, props, opts)
	if err != nil {
		fmt.Fprintf(stderr, "verify model: %v\n", err)
		return cli.ExitUsage
	}
	var results []modelResultJSON
results:
	for _, r := range rs {
		files := map[string]string{}
		if r.Verdict == checker.Violated {
			files, err = writeCounterexample(f.out, r)
			if err != nil {
				fmt.Fprintf(stderr, "verify model: writing the counterexample: %v\n", err)
			}
		}
		if f.json {
			results = append(results, modelResult(r, files))
		} else {
			printModelResult(stdout, r, files)
		}
		switch r.Verdict {
		case checker.Violated:
			code = cli.ExitViolated
			break results
		case checker.Unknown:
			code = cli.ExitUnknown
			if ctx.Err() != nil {
				break results // interrupted: report what was found and stop
			}
		}
	}
	if f.json {
		printModelJSON(stdout, code, results)
	}
	return code
}

// resolve turns the flags into a configuration, the properties to check and
// the options.
func (f *modelFlags) resolve() (model.Config, []explore.Property, explore.Options, error) {
	cfg := f.cfg
	cfg.Policy = model.Policy(f.policy)
	if cfg.Workers < 1 || cfg.Tasks < 1 {
		return cfg, nil, explore.Options{}, fmt.Errorf("--workers and --tasks must be at least 1")
	}
	v, err := model.ParseVariant(f.variant)
	if err != nil {
		return cfg, nil, explore.Options{}, fmt.Errorf("%w (see --list)", err)
	}
	cfg.Variant = v
	if f.priorities != "" {
		for _, s := range strings.Split(f.priorities, ",") {
			p, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return cfg, nil, explore.Options{}, fmt.Errorf("--priorities: %q is not a number", s)
			}
			cfg.Priorities = append(cfg.Priorities, p)
		}
	}
	if cfg.Policy != model.WorkSteal {
		cfg.LocalCap = 0
	}
	if err := cfg.Validate(); err != nil {
		return cfg, nil, explore.Options{}, err
	}
	var props []explore.Property
	if f.property == "all" {
		props = explore.AllProperties
		if !cfg.Endless {
			props = props[:3] // fairness says nothing about finite programs
		}
	} else {
		p, err := explore.ParseProperty(f.property)
		if err != nil {
			return cfg, nil, explore.Options{}, err
		}
		props = []explore.Property{p}
	}
	opts := explore.Options{
		MaxStates: f.maxStates,
		MaxBytes:  f.maxMemMiB << 20,
		Timeout:   f.timeout,
		Parallel:  f.parallel,
		Symmetry:  f.symmetry,
	}
	f.scale.apply(&opts)
	switch f.invariants {
	case "all", "":
	case "none":
		opts.Invariants = []string{}
	default:
		for _, name := range strings.Split(f.invariants, ",") {
			if _, ok := model.InvariantByName(name); !ok {
				return cfg, nil, opts, fmt.Errorf("--invariants: unknown invariant %q (see --list)", name)
			}
			opts.Invariants = append(opts.Invariants, name)
		}
	}
	return cfg, props, opts, nil
}

// progressPrinter prints the search's progress every few seconds: what
// was explored, at what rate, and what is left of the budget (--timeout,
// --max-states) with the time it would take at that rate; a search
// without a budget says that its total is known only at its end.
func progressPrinter(w io.Writer, timeout time.Duration, maxStates int64) func(explore.Progress) {
	return func(p explore.Progress) {
		secs := max(p.Elapsed.Seconds(), 1e-3)
		rate := float64(p.States) / secs
		if p.Phase != "exploring" && p.Phase != "bitstate" {
			fmt.Fprintf(w, "  %s states explored; checking %s  %s\n", human(p.States), p.Phase, p.Elapsed.Truncate(time.Second))
			return
		}
		left := "total known only at the end; Ctrl-C stops with what was found"
		switch {
		case maxStates > 0 && timeout > 0:
			left = fmt.Sprintf("budget: %s states or %v left", human(max(maxStates-p.States, 0)), max(timeout-p.Elapsed, 0).Round(time.Second))
		case maxStates > 0:
			n := max(maxStates-p.States, 0)
			left = fmt.Sprintf("budget: %s states left, about %v at this rate", human(n), time.Duration(float64(n)/max(rate, 1)*1e9).Truncate(time.Second))
		case timeout > 0:
			left = fmt.Sprintf("budget: %v left", max(timeout-p.Elapsed, 0).Round(time.Second))
		}
		frontier := ""
		if p.Phase == "exploring" {
			frontier = "  frontier " + human(p.Frontier)
		}
		fmt.Fprintf(w, "  %s states  %s/s  %s transitions  depth %d%s  %s  (%s)\n",
			human(p.States), human(int64(rate)), human(p.Transitions), p.Depth, frontier, p.Elapsed.Truncate(time.Second), left)
	}
}

func human(n int64) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

func printModelList(w io.Writer) {
	fmt.Fprintln(w, "Rules:")
	for _, r := range model.Rules {
		fmt.Fprintf(w, "  %s\n", r)
	}
	fmt.Fprintln(w, "\nInvariants (checked in every reachable state):")
	for _, inv := range model.Invariants {
		fmt.Fprintf(w, "  %-16s %s  [protects %s]\n", inv.Name, inv.Doc, inv.Rule)
	}
	fmt.Fprintf(w, "  %-16s a state with no rule enabled has every task DONE\n", model.NoStuckState)
	fmt.Fprintf(w, "  %-16s a take finds its task QUEUED (a DONE or RUNNING task is never polled)\n", explore.TakeQueuedOnly)
	fmt.Fprintln(w, "\nProperties (--property):")
	fmt.Fprintln(w, "  safety           every invariant in every reachable state, and no stuck state")
	fmt.Fprintln(w, "  eventually-done  under weak fairness every run ends with every task DONE")
	fmt.Fprintln(w, "  woken-polled     under weak fairness a QUEUED (woken) task is eventually polled")
	fmt.Fprintln(w, "  fairness         a task ready again and again is polled again and again (needs --endless)")
	fmt.Fprintln(w, "\nPolicies (--policy):")
	for _, p := range model.Policies {
		fmt.Fprintf(w, "  %s\n", p)
	}
	fmt.Fprintln(w, "\nVariants (--variant), each a deliberately broken rule:")
	for _, v := range model.Variants {
		fmt.Fprintf(w, "  %-22s %s  [breaks %s]\n", v.Variant, v.Bug, v.Rule)
	}
}

// writeCounterexample writes the counterexample as a trace (JSON lines) and
// as an HTML timeline, and returns their paths.
func writeCounterexample(dir string, r *explore.Result) (map[string]string, error) {
	if dir == "" {
		d, err := cli.DefaultOutDir("counterexamples")
		if err != nil {
			return nil, err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	name := r.Property
	if r.Config.Variant != model.Correct {
		name = string(r.Config.Variant) + "-" + name
	}
	h := explore.HeaderOf(r.Config)
	events := r.Counterexample.Events()
	files := map[string]string{
		"trace":    filepath.Join(dir, name+".jsonl"),
		"timeline": filepath.Join(dir, name+".html"),
	}
	if err := traces.WriteFile(files["trace"], h, events); err != nil {
		return nil, err
	}
	mark := explore.Diagnose(r).Mark()
	return files, cli.WriteFile(files["timeline"], func(w io.Writer) error { return picture.WriteHTML(w, h, events, mark) })
}

func printModelResult(w io.Writer, r *explore.Result, files map[string]string) {
	stats := fmt.Sprintf("%d states, %d transitions, depth %d, %.2fs (%s states/s, %.1f bytes/state)",
		r.States, r.Transitions, r.Depth, r.Elapsed.Seconds(), human(int64(r.StatesPerSecond())), r.BytesPerState())
	switch r.Verdict {
	case checker.Holds:
		fmt.Fprintf(w, "HOLDS     %s\n  model: %s\n  %s\n", r.Property, r.Config, stats)
		return
	case checker.Unknown:
		fmt.Fprintf(w, "UNKNOWN   %s: %s\n  model: %s\n  explored so far: %s\n", r.Property, r.Message, r.Config, stats)
		return
	}
	fmt.Fprintf(w, "VIOLATED  %s: %s\n", r.Property, r.Message)
	d := explore.Diagnose(r)
	printDiagnosis(w, d)
	if rule := brokenRule(r); rule != "" {
		fmt.Fprintf(w, "  rule: %s\n", rule)
	}
	fmt.Fprintf(w, "  model: %s\n  %s\n\n", r.Config, stats)
	cx := r.Counterexample
	kind := "shortest counterexample"
	switch {
	case cx.Loop == len(cx.Steps):
		kind = "counterexample (a fair run that gets stuck)"
	case cx.Loop >= 0:
		kind = "counterexample (a lasso: a path, then a cycle that repeats forever)"
	}
	fmt.Fprintf(w, "  %s, %d steps:\n", kind, len(cx.Steps))
	if cx.Incomplete != "" {
		fmt.Fprintf(w, "  (%s)\n", cx.Incomplete)
	}
	printSteps(w, r.Config.Normalized().Workers, cx, d)
	last := cx.Init
	if n := len(cx.Steps); n > 0 && cx.Steps[n-1].State != nil {
		last = cx.Steps[n-1].State
	} else if n > 1 {
		last = cx.Steps[n-2].State
	}
	fmt.Fprintln(w, "\n  state at the end:")
	for _, line := range strings.Split(last.String(), "\n") {
		fmt.Fprintf(w, "    %s\n", line)
	}
	if len(files) > 0 {
		fmt.Fprintf(w, "\n  trace:    %s\n  timeline: %s\n  replay:   %s replay %s\n", cli.Term(files["trace"]), cli.Term(files["timeline"]), cli.SelfCommand(), traces.ShellQuote(files["trace"]))
	}
}

func brokenRule(r *explore.Result) string {
	if inv, ok := model.InvariantByName(r.Property); ok {
		return fmt.Sprintf("%s (the invariant %s protects it)", inv.Rule, inv.Name)
	}
	if r.Config.Variant != model.Correct {
		for _, v := range model.Variants {
			if v.Variant == r.Config.Variant {
				return fmt.Sprintf("%s (variant %s: %s)", v.Rule, v.Variant, v.Bug)
			}
		}
	}
	return ""
}

type jsonStep struct {
	Event int    `json:"event"` // the step's event in the trace, from 1
	Rule  string `json:"rule"`
	Step  string `json:"step"`
	State string `json:"state,omitempty"`
}

// modelResultJSON is one property's result in verify model --json.
type modelResultJSON struct {
	Verdict     string       `json:"verdict"`
	Property    string       `json:"property"`
	Message     string       `json:"message,omitempty"`
	Model       string       `json:"model"`
	States      int64        `json:"states"`
	Transitions int64        `json:"transitions"`
	Depth       int          `json:"depth"`
	Seconds     float64      `json:"seconds"`
	BytesState  float64      `json:"bytes_per_state"`
	Workers     int          `json:"workers"`
	Efficiency  float64      `json:"parallel_efficiency,omitempty"`
	Path        []jsonStep   `json:"path,omitempty"`
	Loop        *int         `json:"loop,omitempty"`
	Trace       string       `json:"trace,omitempty"`
	Timeline    string       `json:"timeline,omitempty"`
	RootCause   *culpritJSON `json:"root_cause,omitempty"`
	Symptom     *culpritJSON `json:"symptom,omitempty"`
}

// printModelJSON prints verify model --json: one object, whatever the
// number of properties checked (docs/json-output.md).
func printModelJSON(w io.Writer, code int, results []modelResultJSON) {
	out := struct {
		Schema  int               `json:"schema"`
		Verdict string            `json:"verdict"`
		Results []modelResultJSON `json:"results"`
	}{cli.JSONSchema, cli.VerdictOf(code), results}
	if out.Results == nil {
		out.Results = []modelResultJSON{}
	}
	cli.PrintJSON(w, out, false)
}

// modelResult is r, whose counterexample was written to files, as JSON.
func modelResult(r *explore.Result, files map[string]string) modelResultJSON {
	out := modelResultJSON{
		Verdict: r.Verdict.String(), Property: r.Property, Message: r.Message, Model: r.Config.String(),
		States: r.States, Transitions: r.Transitions, Depth: r.Depth, Seconds: r.Elapsed.Seconds(),
		BytesState: r.BytesPerState(), Workers: r.Workers, Efficiency: r.Efficiency, Trace: files["trace"], Timeline: files["timeline"],
	}
	out.RootCause, out.Symptom = diagnosisJSON(explore.Diagnose(r))
	if cx := r.Counterexample; cx != nil {
		_, at := cx.StepEvents()
		for k, cs := range cx.Steps {
			js := jsonStep{Event: at[k] + 1, Rule: cs.Step.Rule.String(), Step: cs.Step.String()}
			if cs.State != nil {
				js.State = strings.ReplaceAll(cs.State.String(), "\n", " | ")
			}
			out.Path = append(out.Path, js)
		}
		if cx.Loop >= 0 {
			l := cx.Loop
			out.Loop = &l
		}
	}
	return out
}

// Bounds of verify model's flags that size work or memory. Each is far
// above any useful value and far below what would exhaust a machine.
const (
	maxParallel = 1024    // model --parallel: exploring goroutines
	maxSwarm    = 1 << 16 // model --swarm I/N and merge: members of a swarm (each one process)
)

// modelFlagSpecs is the table of verify model's numeric flags.
func modelFlagSpecs(f *modelFlags) []cli.FlagSpec {
	policyIs := func(p model.Policy) func() bool { return func() bool { return model.Policy(f.policy) == p } }
	ws := cli.OnlyWith(policyIs(model.WorkSteal), "with --policy worksteal")
	prio := cli.OnlyWith(policyIs(model.Priority), "with --policy priority")
	bitstate := cli.OnlyWith(func() bool { return f.scale.bitstateMB != 0 || f.scale.swarm != "" }, "with a bitstate search (--bitstate MB or --swarm I/N)")
	return []cli.FlagSpec{
		{Name: "workers", Min: 1, Max: model.MaxWorkers},
		{Name: "tasks", Min: 1, Max: model.MaxTasks},
		{Name: "pendings", Min: 0, Max: 15},
		{Name: "wakes", Min: 1, Max: 15},
		{Name: "local-cap", Min: 1, Max: 15, Applies: ws},
		{Name: "owner-fifo", Applies: ws},
		{Name: "steal-half", Applies: ws},
		{Name: "global-interval", Min: 0, Max: 255, Applies: ws},
		{Name: "priorities", Applies: prio},
		{Name: "aging", Min: 1, Max: 255, ExplicitOnly: true, Applies: func() string {
			if why := prio(); why != "" {
				return why
			}
			if model.Variant(f.variant) == model.NoAging {
				return "--variant no-aging has no aging"
			}
			return ""
		}},
		{Name: "slice", Min: 1, Max: 255, ExplicitOnly: true, Applies: cli.OnlyWith(policyIs(model.TimeSlice), "with --policy timeslice")},
		{Name: "retries", Min: 1, Max: 15, ExplicitOnly: true, Applies: cli.OnlyWith(policyIs(model.Retry), "with --policy retry")},
		{Name: "failures", Min: 1, Max: 15, ExplicitOnly: true, Applies: cli.OnlyWith(policyIs(model.Retry), "with --policy retry")},
		{Name: "max-states", Min: 0, Max: math.MaxInt64},
		{Name: "max-memory", Min: 0, Max: 1 << 30},
		{Name: "timeout", Min: 0, Max: cli.MaxDuration},
		{Name: "parallel", Min: 0, Max: maxParallel},
		{Name: "seed", Applies: bitstate},
		{Name: "hashes", Min: 1, Max: 16, Applies: bitstate},
		{Name: "symmetry", Applies: cli.OnlyWith(func() bool { return f.property == "safety" || f.property == "all" }, "with --property safety (or all, where it reduces the safety check)")},
	}
}

// checkModelFlags checks verify model's flags: ranges, where each applies,
// and that the property asked for can say something about the model.
func checkModelFlags(fs *flag.FlagSet, f *modelFlags) error {
	err := cli.ValidateFlags(fs, modelFlagSpecs(f))
	if f.property == "fairness" && !f.cfg.Endless {
		err = errors.Join(err, errors.New("--property fairness needs --endless: without endless futures every fair run ends, so fairness (□◇ready ⇒ □◇polled) would hold vacuously"))
	}
	return err
}

// Default is what verify with no arguments runs.
var Default = cli.Command{Name: "default", Summary: "", Run: runDefault}

// runDefault is what `verify` with no arguments does: model-check the
// work-stealing policy on a small configuration, safety and liveness, and
// show that a known bug is caught; then say what to try next.
func runDefault(ctx context.Context, _ []string, stdout, stderr io.Writer) int {
	cfg := model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1, LocalCap: 2}
	fmt.Fprintf(stdout, "execspec: model-checking the work-stealing policy (%s)\n\n", cfg)
	code := cli.ExitHolds
	for _, p := range []explore.Property{explore.Safety, explore.EventuallyDone, explore.WokenPolled} {
		r, err := explore.Explore(ctx, cfg, explore.Options{Property: p})
		if err != nil {
			fmt.Fprintf(stderr, "verify: %v\n", err)
			return cli.ExitUsage
		}
		fmt.Fprintf(stdout, "  %-16s %-8s %d states, %d transitions, %.2fs\n", p, r.Verdict, r.States, r.Transitions, r.Elapsed.Seconds())
		switch r.Verdict {
		case checker.Violated:
			fmt.Fprintf(stdout, "    %s: %s\n", r.Property, r.Message)
			code = cli.ExitViolated
		case checker.Unknown:
			if code == cli.ExitHolds {
				code = cli.ExitUnknown
			}
		}
	}
	fmt.Fprintln(stdout, "\nand each deliberately broken variant of the rules is caught:")
	for _, v := range model.Variants {
		c, p := cfg, explore.Safety
		c.Variant = v.Variant
		if v.Variant == model.NoAging {
			c = model.Config{Policy: model.Priority, Workers: 1, Tasks: 2, Endless: true, Variant: v.Variant}
			p = explore.Fairness
		}
		r, err := explore.Explore(ctx, c, explore.Options{Property: p})
		if err != nil {
			fmt.Fprintf(stderr, "verify: %v\n", err)
			return cli.ExitUsage
		}
		steps := 0
		if r.Counterexample != nil {
			steps = len(r.Counterexample.Steps)
		}
		fmt.Fprintf(stdout, "  %-22s %-8s %s after %d steps\n", v.Variant, r.Verdict, r.Property, steps)
		if r.Verdict != checker.Violated && code == cli.ExitHolds {
			code = cli.ExitViolated // a variant that is not caught is a failure of the checker
		}
	}
	fmt.Fprintln(stdout, "\nTry next:")
	for _, l := range [][2]string{
		{"model --variant lost-wakeup", "a counterexample, step by step, with its trace"},
		{"model --workers 3 --tasks 4 --pendings 2 --property all", ""},
		{"model --list", "the rules, invariants, properties and variants"},
		{"cover --time 20s", "how much of the model a real executor's runs reach"},
		{"run --executor broken/lost-wakeup", "the property suite catching a broken executor"},
		{"test ./pkg --instrument MODULE/...", "a package's tests under controlled schedules, replayable"},
		{"-h", "every command (check, replay, run, test, ...)"},
	} {
		// As the user ran this command: "verify …" or "go run ./cmd/verify …".
		fmt.Fprintln(stdout, strings.TrimRight(fmt.Sprintf("  %-56s %s", cli.SelfCommand()+" "+l[0], l[1]), " "))
	}
	return code
}
