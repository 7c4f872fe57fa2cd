// Command goker runs the GoBench blocking kernels that ship with Go
// ($GOROOT/src/runtime/testdata/testgoroutineleakprofile/goker) under
// controlled schedules: each kernel is rewritten by the instrument package
// and run until a run ends in a deadlock or a leak, then that run's
// schedule is replayed ten times. The kernels are read from the Go
// installation at run time and written, with the rewritten files, to a
// temporary directory only.
//
//	go run ./bench/goker [-strategy random|pct] [-runs 1000] [-seed 1] [-copies N] [-early-timers] [-only REGEXP] [-json]
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
			err := rt.ReplayWith(t, rt.Config{Seed: seed + uint64(n), EarlyTimers: early}, sched, func(*testing.T) { f() })
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

func main() {
	strategy := flag.String("strategy", "random", "random or pct")
	runs := flag.Int("runs", 1000, "runs per kernel before giving up")
	seed := flag.Uint64("seed", 1, "seed")
	only := flag.String("only", "", "only the kernels matching this regular expression")
	asJSON := flag.Bool("json", false, "print one JSON object per kernel")
	timeout := flag.Duration("timeout", time.Minute, "wall-clock limit per kernel")
	copies := flag.Int("copies", 0, "if > 0, loops of 100 or more iterations (the copies Go's test starts to make a leak likely) run this many times")
	early := flag.Bool("early-timers", false, "let timers fire while other goroutines could run (rt.Config.EarlyTimers)")
	flag.Parse()
	earlyTimers = *early
	if err := run(*strategy, *runs, *seed, *only, *asJSON, *timeout, *copies); err != nil {
		fmt.Fprintln(os.Stderr, "goker:", err)
		os.Exit(2)
	}
}

var earlyTimers bool

var registerRE = regexp.MustCompile(`register\("(\w+)"`)

var copiesRE = regexp.MustCompile(`(for i := 0; i )<=? (\d{3,})(; i\+\+ \{)`)

func run(strategy string, runs int, seed uint64, only string, asJSON bool, timeout time.Duration, copies int) error {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return err
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src/runtime/testdata/testgoroutineleakprofile/goker")
	files, _ := filepath.Glob(filepath.Join(src, "*.go"))
	if len(files) == 0 {
		return fmt.Errorf("no GoBench kernels in %s (they ship with Go 1.26)", src)
	}
	root := instrument.SourceRoot()
	if root == "" {
		return fmt.Errorf("run from the execspec module's source")
	}
	work, err := os.MkdirTemp("", "goker-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	pkg := filepath.Join(work, "goker")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return err
	}
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		// The kernels end by writing Go's goroutine leak profile, which
		// is absent without GOEXPERIMENT=goroutineleakprofile; the
		// scheduler is the oracle here.
		b = bytes.ReplaceAll(b, []byte("prof.WriteTo(os.Stdout, 2)"), []byte("_, _ = prof, os.Stdout"))
		if copies > 0 {
			b = copiesRE.ReplaceAll(b, []byte(fmt.Sprintf("${1}< %d${3}", copies)))
		}
		for _, m := range registerRE.FindAllSubmatch(b, -1) {
			names = append(names, string(m[1]))
		}
		if err := os.WriteFile(filepath.Join(pkg, filepath.Base(f)), b, 0o644); err != nil {
			return err
		}
	}
	slices.Sort(names)
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	mod := fmt.Sprintf("module goker\n\ngo 1.26\n\nrequire github.com/execspec/execspec v0.0.0\n\nreplace github.com/execspec/execspec => %s\n", root)
	for name, b := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "goker/kernel_test.go": []byte(driver)} {
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			return err
		}
	}
	// The module written above has no complete go.sum of its own.
	os.Setenv("GOFLAGS", "-mod=mod")
	t0 := time.Now()
	b, err := instrument.Instrument(instrument.Config{Dir: pkg, Tests: []string{"."}, Out: filepath.Join(work, "inst")})
	if err != nil {
		return err
	}
	bin := filepath.Join(work, "goker.test")
	args := append([]string{"test", "-c", "-o", bin, "-mod=mod"}, b.Flags()...)
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = pkg
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the instrumented kernels: %v\n%s", err, out)
	}
	fmt.Fprintf(os.Stderr, "goker: %d kernels rewritten and built in %.1fs (%v)\n", len(names), time.Since(t0).Seconds(), b.Counts)
	var re *regexp.Regexp
	if only != "" {
		re = regexp.MustCompile(only)
	}
	var results []result
	for _, name := range names {
		if re != nil && !re.MatchString(name) {
			continue
		}
		r := runKernel(bin, pkg, name, strategy, runs, seed, timeout)
		results = append(results, r)
		if asJSON {
			j, _ := json.Marshal(r)
			fmt.Println(string(j))
		} else {
			status := "not found"
			if r.Found {
				status = r.Kind
			}
			fmt.Printf("%-16s %-9s runs %5d  replayed %2d/10  %6.2fs  %s\n", name, status, r.Runs, r.Replayed, r.Seconds, firstLine(r.Error))
		}
	}
	summary(results, strategy, runs, seed)
	return nil
}

func runKernel(bin, dir, name, strategy string, runs int, seed uint64, timeout time.Duration) result {
	start := time.Now()
	cmd := exec.Command(bin, "-test.run", "^TestKernel$", "-test.timeout", timeout.String())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOKER_KERNEL="+name, fmt.Sprintf("GOKER_RUNS=%d", runs), fmt.Sprintf("GOKER_SEED=%d", seed), "GOKER_STRATEGY="+strategy, fmt.Sprintf("GOKER_EARLY=%d", map[bool]int{false: 0, true: 1}[earlyTimers]))
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

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

func summary(rs []result, strategy string, runs int, seed uint64) {
	var found []int
	replayed := 0
	for _, r := range rs {
		if r.Found {
			found = append(found, r.Runs)
			if r.Replayed == 10 {
				replayed++
			}
		}
	}
	slices.Sort(found)
	med, maxr := 0, 0
	if len(found) > 0 {
		med = found[len(found)/2]
		maxr = found[len(found)-1]
	}
	fmt.Printf("\n%s, seed %d, at most %d runs: %d of %d kernels found; runs to the first detection: median %d, max %d; replayed 10/10: %d of %d found\n",
		strategy, seed, runs, len(found), len(rs), med, maxr, replayed, len(found))
}
