// Command goker runs the GoBench blocking kernels that ship with Go
// ($GOROOT/src/runtime/testdata/testgoroutineleakprofile/goker) under
// controlled schedules: each kernel is rewritten by the instrument package
// and run until a run ends in a deadlock or a leak, then that run's
// schedule is replayed ten times. The kernels are read from the Go
// installation at run time and written, with the rewritten files, to a
// temporary directory only.
//
//	go run ./bench/goker [-strategy random|pct] [-runs 1000] [-seed 1] [-copies N] [-early-timers=false] [-exhaust 3] [-only REGEXP] [-json]
//
// Early timers are on, as in verify test (-early-timers=false lets time
// pass only once every goroutine is blocked). A kernel the search does
// not find is then searched exhaustively: every schedule with at most
// -exhaust preemptions (-1: none), within -exhaust-runs runs and the
// kernel's time. If every such schedule ran to its end without a leak,
// the kernel is reported "no leak" (shown leak-free within the bound),
// not "not found", and the summary counts the kernels that can leak.
//
// Go's test starts many copies of most kernels (loops of 100 to 100,000
// iterations) so that a free run leaks at least once; -copies 1 runs one,
// as the GoBench originals do: under control the copies only make each
// run longer.
//
// One line per kernel, then a summary: kernels found, median and maximum
// runs to the first detection, replays that reproduced the schedule's
// checksum and outcome.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/execspec/execspec/instrument"
)

type result struct {
	Kernel      string  `json:"kernel"`
	Found       bool    `json:"found"`
	Runs        int     `json:"runs"` // runs to the first detection (or all runs made)
	Kind        string  `json:"kind,omitempty"`
	Replayed    int     `json:"replayed"` // of 10
	Error       string  `json:"error,omitempty"`
	ReplayError string  `json:"replay_error,omitempty"` // the first replay that differed
	Seconds     float64 `json:"seconds"`
	// Exhaustive is the search of every schedule within a preemption
	// bound, made when the random or PCT search found nothing.
	Exhaustive *exhaustive `json:"exhaustive,omitempty"`
}

type exhaustive struct {
	Preemptions int    `json:"preemptions"`
	Runs        int    `json:"runs"`
	Unknown     int    `json:"unknown"`  // runs stopped by the step budget
	Complete    bool   `json:"complete"` // every schedule within the bound ran to its end
	Error       string `json:"error,omitempty"`
}

// leakFree reports whether the kernel was shown not to leak: not found,
// and every schedule within the bound ran to its end without a leak.
func (r result) leakFree() bool { return !r.Found && r.Exhaustive != nil && r.Exhaustive.Complete }

func (r result) status() string {
	switch {
	case r.Found:
		return r.Kind
	case r.leakFree():
		return "no leak"
	}
	return "not found"
}

// driver is the test that runs one kernel; it is not wrapped by the
// rewriter (NoControl) and drives the runtime itself.
const driver = `package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control"
)

// TestKernel runs the kernel named by GOKER_KERNEL.
//
//execspec:nocontrol
func TestKernel(t *testing.T) {
	name := os.Getenv("GOKER_KERNEL")
	f := cmds[name]
	if f == nil {
		t.Fatalf("no kernel %q", name)
	}
	runs, _ := strconv.Atoi(os.Getenv("GOKER_RUNS"))
	seed, _ := strconv.ParseUint(os.Getenv("GOKER_SEED"), 10, 64)
	var s control.Strategy = control.Random(seed)
	if os.Getenv("GOKER_STRATEGY") == "pct" {
		s = control.NewPCT(3, 0, seed)
	}
	early := os.Getenv("GOKER_EARLY") == "1"
	gokerCopiesN, _ = strconv.Atoi(os.Getenv("GOKER_COPIES"))
	exhaust, _ := strconv.Atoi(os.Getenv("GOKER_EXHAUST"))
	exhaustRuns, _ := strconv.Atoi(os.Getenv("GOKER_EXHAUST_RUNS"))
	budget, _ := time.ParseDuration(os.Getenv("GOKER_BUDGET"))
	start := time.Now()
	out := map[string]any{"kernel": name}
	var sched control.Schedule
	var found error
	var last error
	n := 0
	for n < runs {
		n++
		if b, ok := s.(interface{ Begin() }); ok {
			b.Begin()
		}
		sc, err := rt.Run(t, rt.Config{Strategy: s, Seed: seed + uint64(n), EarlyTimers: early}, func(*testing.T) { f() })
		if e, ok := s.(interface{ End(int) }); ok {
			e.End(sc.Steps)
		}
		if errors.Is(err, rt.ErrDeadlock) || errors.Is(err, rt.ErrLeak) {
			sched, found = sc, err
			break
		}
		if err != nil {
			last = err
		}
	}
	runSeed := seed + uint64(n)
	if found == nil && exhaust >= 0 {
		// Not found by the search: every schedule of one copy with at
		// most exhaust preemptions, depth first (the select cases a
		// schedule chooses included; so are the decisions at which time
		// may pass early). Complete with no leak, one copy cannot leak
		// within the bound; a leak found here counts as found.
		gokerCopiesN = 1
		d := control.NewDFS(control.ExploreConfig{MaxPreemptions: exhaust})
		runSeed = seed
		ex := map[string]any{"preemptions": exhaust}
		m, unknown := 0, 0
		for {
			if m == exhaustRuns || time.Since(start) > budget {
				break
			}
			m++
			d.Begin()
			sc, err := rt.Run(t, rt.Config{Strategy: d, Seed: runSeed, EarlyTimers: early}, func(*testing.T) { f() })
			if errors.Is(err, rt.ErrDeadlock) || errors.Is(err, rt.ErrLeak) {
				sched, found = sc, err
				break
			}
			if d.Err() != nil {
				ex["error"] = d.Err().Error()
				break
			}
			if err != nil {
				unknown++ // the step budget: this schedule says nothing
			}
			if !d.Next() {
				ex["complete"] = unknown == 0
				break
			}
		}
		ex["runs"], ex["unknown"] = m, unknown
		out["exhaustive"] = ex
		n += m
	}
	out["runs"] = n
	out["found"] = found != nil
	if found != nil {
		kind := "deadlock"
		if errors.Is(found, rt.ErrLeak) {
			kind = "leak"
		}
		out["kind"] = kind
		out["error"] = found.Error()
		ok := 0
		for range 10 {
			err := rt.ReplayWith(t, rt.Config{Seed: runSeed, EarlyTimers: early}, sched, func(*testing.T) { f() })
			if err != nil && err.Error() == found.Error() {
				ok++
			} else if out["replay_error"] == nil {
				out["replay_error"] = fmt.Sprint(err)
			}
		}
		out["replayed"] = ok
	} else if last != nil {
		out["error"] = fmt.Sprint(last)
	}
	out["seconds"] = time.Since(start).Seconds()
	b, _ := json.Marshal(out)
	fmt.Printf("GOKER %s\n", b)
}
`

// copiesSrc bounds the copies of a kernel that Go's test starts (loops
// of 100 or more iterations, rewritten to call gokerCopies): copies, if
// positive, instead of n. The driver sets it.
const copiesSrc = `package main

var gokerCopiesN int

func gokerCopies(n int) int {
	if gokerCopiesN > 0 && gokerCopiesN < n {
		return gokerCopiesN
	}
	return n
}
`

func main() {
	var o options
	flag.StringVar(&o.strategy, "strategy", "random", "random or pct")
	flag.IntVar(&o.runs, "runs", 1000, "runs per kernel before giving up")
	flag.Uint64Var(&o.seed, "seed", 1, "seed")
	flag.StringVar(&o.only, "only", "", "only the kernels matching this regular expression (only their files are rewritten and built)")
	asJSON := flag.Bool("json", false, "print one JSON object per kernel")
	flag.DurationVar(&o.timeout, "timeout", time.Minute, "wall-clock limit per kernel")
	flag.IntVar(&o.copies, "copies", 0, "if > 0, loops of 100 or more iterations (the copies Go's test starts to make a leak likely) run this many times")
	flag.BoolVar(&o.early, "early-timers", true, "let timers fire while other goroutines could run (rt.Config.EarlyTimers, verify test's default)")
	flag.IntVar(&o.exhaust, "exhaust", 3, "a kernel not found is then run, one copy, under every schedule with at most this many preemptions (0: unbounded; -1: not)")
	flag.IntVar(&o.exhaustRuns, "exhaust-runs", 1_000_000, "at most this many runs of the exhaustive search")
	flag.Parse()
	print := func(r result) {
		if *asJSON {
			j, _ := json.Marshal(r)
			fmt.Println(string(j))
			return
		}
		fmt.Printf("%-16s %-9s runs %5d  replayed %2d/10  %6.2fs  %s\n", r.Kernel, r.status(), r.Runs, r.Replayed, r.Seconds, r.note())
	}
	rs, err := run(o, os.Stderr, print)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goker:", err)
		os.Exit(2)
	}
	fmt.Println()
	fmt.Println(summary(rs, o))
}

// options of one benchmark run (the flags).
type options struct {
	strategy    string
	runs        int
	seed        uint64
	only        string
	timeout     time.Duration
	copies      int
	early       bool
	exhaust     int
	exhaustRuns int
	// mutate, if not nil, rewrites a kernel's source (file name, text)
	// before it is instrumented: the tests break a kernel on purpose.
	mutate func(name string, src []byte) []byte
}

var registerRE = regexp.MustCompile(`register\("(\w+)"`)

var copiesRE = regexp.MustCompile(`(for i := 0; i )<=? (\d{3,})(; i\+\+ \{)`)

// run rewrites and builds the kernels that o selects, runs each, and
// calls report with each result as it comes; build progress goes to log.
func run(o options, log io.Writer, report func(result)) ([]result, error) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, err
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src/runtime/testdata/testgoroutineleakprofile/goker")
	files, _ := filepath.Glob(filepath.Join(src, "*.go"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no GoBench kernels in %s (they ship with Go 1.26)", src)
	}
	root := instrument.SourceRoot()
	if root == "" {
		return nil, fmt.Errorf("run from the execspec module's source")
	}
	var re *regexp.Regexp
	if o.only != "" {
		if re, err = regexp.Compile(o.only); err != nil {
			return nil, fmt.Errorf("-only: %v", err)
		}
	}
	work, err := os.MkdirTemp("", "goker-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	pkg := filepath.Join(work, "goker")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		regs := registerRE.FindAllSubmatch(b, -1)
		if re != nil && len(regs) > 0 && !slices.ContainsFunc(regs, func(m [][]byte) bool { return re.Match(m[1]) }) {
			continue // another kernel's file: not built
		}
		// The kernels end by writing Go's goroutine leak profile, which
		// is absent without GOEXPERIMENT=goroutineleakprofile; the
		// scheduler is the oracle here.
		b = bytes.ReplaceAll(b, []byte("prof.WriteTo(os.Stdout, 2)"), []byte("_, _ = prof, os.Stdout"))
		// The copies are a variable of the run (copies.go): the search
		// runs o.copies, the exhaustive search one.
		b = copiesRE.ReplaceAll(b, []byte("${1}< gokerCopies(${2})${3}"))
		if o.mutate != nil {
			b = o.mutate(filepath.Base(f), b)
		}
		for _, m := range regs {
			names = append(names, string(m[1]))
		}
		if err := os.WriteFile(filepath.Join(pkg, filepath.Base(f)), b, 0o644); err != nil {
			return nil, err
		}
	}
	slices.Sort(names)
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	mod := fmt.Sprintf("module goker\n\ngo 1.26\n\nrequire github.com/execspec/execspec v0.0.0\n\nreplace github.com/execspec/execspec => %s\n", root)
	for name, b := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "goker/kernel_test.go": []byte(driver), "goker/copies.go": []byte(copiesSrc)} {
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	// The module written above has no complete go.sum of its own.
	os.Setenv("GOFLAGS", "-mod=mod")
	t0 := time.Now()
	b, err := instrument.Instrument(instrument.Config{Dir: pkg, Tests: []string{"."}, Out: filepath.Join(work, "inst")})
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(work, "goker.test")
	args := append([]string{"test", "-c", "-o", bin, "-mod=mod"}, b.Flags()...)
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = pkg
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the instrumented kernels: %v\n%s", err, out)
	}
	fmt.Fprintf(log, "goker: %d kernels rewritten and built in %.1fs (%v)\n", len(names), time.Since(t0).Seconds(), b.Counts)
	var results []result
	for _, name := range names {
		if re != nil && !re.MatchString(name) {
			continue
		}
		r := runKernel(bin, pkg, name, o)
		results = append(results, r)
		report(r)
	}
	return results, nil
}

func runKernel(bin, dir, name string, o options) result {
	start := time.Now()
	cmd := exec.Command(bin, "-test.run", "^TestKernel$", "-test.timeout", o.timeout.String())
	cmd.Dir = dir
	early := 0
	if o.early {
		early = 1
	}
	// The exhaustive search stops with a fifth of the kernel's time left
	// for its replays and report.
	cmd.Env = append(os.Environ(), "GOKER_KERNEL="+name, fmt.Sprintf("GOKER_RUNS=%d", o.runs), fmt.Sprintf("GOKER_SEED=%d", o.seed), "GOKER_STRATEGY="+o.strategy,
		fmt.Sprintf("GOKER_EARLY=%d", early), fmt.Sprintf("GOKER_COPIES=%d", o.copies), fmt.Sprintf("GOKER_EXHAUST=%d", o.exhaust), fmt.Sprintf("GOKER_EXHAUST_RUNS=%d", o.exhaustRuns), "GOKER_BUDGET="+(o.timeout*4/5).String())
	out, err := cmd.CombinedOutput()
	r := result{Kernel: name, Seconds: time.Since(start).Seconds()}
	for _, line := range strings.Split(string(out), "\n") {
		if j, ok := strings.CutPrefix(line, "GOKER "); ok {
			if json.Unmarshal([]byte(j), &r) == nil {
				r.Seconds = time.Since(start).Seconds()
				return r
			}
		}
	}
	r.Error = fmt.Sprintf("the kernel's process failed (%v): %s", err, lastLines(string(out), 6))
	return r
}

// note is the rest of a kernel's line: the finding, or what the
// exhaustive search did.
func (r result) note() string {
	s, _, _ := strings.Cut(r.Error, "\n")
	if e := r.Exhaustive; e != nil && !r.Found {
		switch {
		case e.Complete:
			s = fmt.Sprintf("every schedule of one copy with at most %d preemptions (%d) ran to its end: no leak", e.Preemptions, e.Runs)
		case e.Error != "":
			s = fmt.Sprintf("exhaustive search stopped after %d runs: %s", e.Runs, e.Error)
		default:
			s = fmt.Sprintf("exhaustive search incomplete: %d runs with at most %d preemptions (%d stopped by the step budget) %s", e.Runs, e.Preemptions, e.Unknown, s)
		}
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

// summary is the last line: the kernels found of those that can leak
// (all but those shown leak-free), runs to the first detection, replays.
func summary(rs []result, o options) string {
	var found []int
	var free []string
	replayed := 0
	for _, r := range rs {
		switch {
		case r.Found:
			found = append(found, r.Runs)
			if r.Replayed == 10 {
				replayed++
			}
		case r.leakFree():
			free = append(free, r.Kernel)
		}
	}
	slices.Sort(found)
	med, maxr := 0, 0
	if len(found) > 0 {
		med = found[len(found)/2]
		maxr = found[len(found)-1]
	}
	mode := ", early timers"
	if !o.early {
		mode = ", no early timers"
	}
	s := fmt.Sprintf("%s%s, seed %d, at most %d runs: %d of %d kernels found", o.strategy, mode, o.seed, o.runs, len(found), len(rs))
	if len(free) > 0 {
		s = fmt.Sprintf("%s%s, seed %d, at most %d runs: %d of %d leakable kernels found (%d kernels; no leak in any schedule of one copy with at most %d preemptions: %s)",
			o.strategy, mode, o.seed, o.runs, len(found), len(rs)-len(free), len(rs), o.exhaust, strings.Join(free, ", "))
	}
	return s + fmt.Sprintf("; runs to the first detection: median %d, max %d; replayed 10/10: %d of %d found", med, maxr, replayed, len(found))
}
