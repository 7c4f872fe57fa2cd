// Command hookless measures the property suite and spec coverage on the
// built-in executors with their Scheduler hook unused, on the instrumented
// engine: it builds properties/testdata/hookless once with packages
// executor and properties/broken instrumented, then runs its tests.
//
//	go run ./bench/hookless suite [-cases 1000] [-executors a,b] [-depth 3]
//	go run ./bench/hookless cover [-strategy random] [-goal 100] [-time 60s] [-pairs 5] [-first 1]
//	go run ./bench/hookless broken [-cases 200]
//
// suite runs the suite on each built-in executor under PCT, -cases cases
// per property, and prints per executor the cases run, the failures and
// the time. cover runs coverage.Run on the work-stealing executor
// -pairs times through its hook and -pairs times with the hook unused
// (the instrumented engine), alternating, each pair with its seed (-first,
// -first+1, ...), and
// prints each run and the medians of both modes: the share of reachable
// states visited and the time to the goal. broken runs the suite (PCT,
// stopping at the first failure) on each executor of properties/broken's
// catalogue, hook unused, and prints what it caught and how soon.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/instrument"
	"github.com/execspec/execspec/instrument/harness"
	"github.com/execspec/execspec/properties/broken"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "suite" && os.Args[1] != "cover" && os.Args[1] != "broken") {
		fmt.Fprintln(os.Stderr, "usage: hookless suite|cover|broken [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	cases := fs.Int("cases", 1000, "suite, broken: cases per property")
	only := fs.String("executors", "", "suite: comma-separated built-in executors (default all)")
	depth := fs.Int("depth", 3, "suite: PCT's depth")
	strategy := fs.String("strategy", "random", "cover: random, pct or guided")
	goal := fs.Float64("goal", 100, "cover: goal in percent of the reachable states (0: none, the runs go on for -time)")
	budget := fs.Duration("time", 60*time.Second, "cover: budget of one measurement")
	pairs := fs.Int("pairs", 5, "cover: measurements of each mode")
	first := fs.Int("first", 1, "cover: the seed of the first pair (then first+1, ...)")
	_ = fs.Parse(os.Args[2:])

	work, err := os.MkdirTemp("", "execspec-hookless-")
	check(err)
	defer os.RemoveAll(work)
	bin := build(work)
	switch os.Args[1] {
	case "suite":
		names := executor.BuiltinNames()
		if *only != "" {
			names = strings.Split(*only, ",")
		}
		total := 0
		for _, name := range names {
			t0 := time.Now()
			outs, out := run(bin, work, "TestBuiltins", harness.EnvRuns+"="+strconv.Itoa(*cases), harness.EnvStrategy+"=pct",
				harness.EnvDepth+"="+strconv.Itoa(*depth), "HOOKLESS_EXECUTORS="+name)
			n, failed := 0, 0
			for _, o := range outs {
				n += o.Runs
				if o.FailedRun != 0 {
					failed++
					fmt.Printf("  %s: %s\n", o.Test, o.Error)
				}
			}
			if !strings.Contains(out, "cases run on the instrumented engine") {
				fmt.Printf("%-10s did not run on the instrumented engine:\n%s\n", name, out)
				os.Exit(1)
			}
			total += n
			fmt.Printf("%-10s %3d properties %7d cases (pct, depth %d) %d failed  %6.1fs\n", name, len(outs), n, *depth, failed, time.Since(t0).Seconds())
		}
		fmt.Printf("total: %d cases\n", total)
	case "broken":
		caught := 0
		cat := broken.Catalogue()
		for _, b := range cat {
			t0 := time.Now()
			outs, out := run(bin, work, "TestBroken", harness.EnvRuns+"="+strconv.Itoa(*cases), harness.EnvStrategy+"=pct",
				harness.EnvDepth+"="+strconv.Itoa(*depth), "HOOKLESS_BROKEN="+b.Name)
			if !strings.Contains(out, "cases run on the instrumented engine") {
				fmt.Printf("%-22s did not run on the instrumented engine:\n%s\n", b.Name, out)
				os.Exit(1)
			}
			found, n := "", 0
			for _, o := range outs {
				n += o.Runs
				if o.FailedRun != 0 && found == "" {
					found = o.Error
				}
			}
			if found != "" {
				caught++
			} else {
				found = "not caught"
			}
			fmt.Printf("%-22s %6.1fs  %5d cases (shrinking included)  %s\n", b.Name, time.Since(t0).Seconds(), n, found)
		}
		fmt.Printf("caught %d of %d\n", caught, len(cat))
	case "cover":
		type row struct {
			Mode      string  `json:"mode"`
			Seed      int     `json:"seed"`
			Runs      int     `json:"runs"`
			States    int     `json:"states"`
			Reachable int     `json:"reachable"`
			Percent   float64 `json:"state_percent"`
			TPercent  float64 `json:"transition_percent"`
			Seconds   float64 `json:"seconds"`
			Stopped   string  `json:"stopped"`
			Failures  int     `json:"run_failures"`
			First     string  `json:"first_failure"`
			Unvisited []struct {
				Class   string `json:"class"`
				Example string `json:"example"`
				Depth   int    `json:"depth"`
			} `json:"unvisited"`
		}
		by := map[string][]row{}
		for i := *first; i < *first+*pairs; i++ {
			for _, hook := range []string{"1", "0"} {
				_, out := run(bin, work, "TestCover", "HOOKLESS_COVER="+*strategy, "HOOKLESS_COVER_HOOK="+hook,
					"HOOKLESS_COVER_GOAL="+strconv.FormatFloat(*goal, 'f', -1, 64), "HOOKLESS_COVER_TIME="+strconv.FormatFloat(budget.Seconds(), 'f', -1, 64),
					"HOOKLESS_COVER_SEED="+strconv.Itoa(i), harness.EnvRuns+"=1")
				var r row
				sc := bufio.NewScanner(strings.NewReader(out))
				for sc.Scan() {
					if _, js, ok := strings.Cut(sc.Text(), "cover: "); ok {
						check(json.Unmarshal([]byte(js), &r))
					}
				}
				if r.Mode == "" {
					fmt.Printf("no result:\n%s\n", out)
					os.Exit(1)
				}
				r.Seed = i
				by[r.Mode] = append(by[r.Mode], r)
				fmt.Printf("%-12s seed %d: %d/%d states (%.1f%%), transitions %.1f%%, %d runs, %.2fs, stopped by %s, %d runs failed %s\n",
					r.Mode, i, r.States, r.Reachable, r.Percent, r.TPercent, r.Runs, r.Seconds, r.Stopped, r.Failures, r.First)
				if r.States < r.Reachable {
					for _, u := range r.Unvisited {
						fmt.Printf("    unvisited: %s (depth %d), e.g. %s\n", u.Class, u.Depth, u.Example)
					}
				}
			}
		}
		for _, mode := range []string{"hook", "instrumented"} {
			rs := by[mode]
			var pct, secs, runs []float64
			for _, r := range rs {
				pct = append(pct, r.Percent)
				secs = append(secs, r.Seconds)
				runs = append(runs, float64(r.Runs))
			}
			fmt.Printf("median %-12s %.1f%% of states, %.2fs, %.0f runs (%d measurements, %s, goal %g%%)\n", mode, median(pct), median(secs), median(runs), len(rs), *strategy, *goal)
		}
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// build instruments packages executor and properties/broken for
// properties/testdata/hookless and compiles its test binary into work.
func build(work string) string {
	root, err := os.Getwd()
	check(err)
	dir := filepath.Join(root, "properties", "testdata", "hookless")
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintln(os.Stderr, "hookless: run from the repository's root:", err)
		os.Exit(2)
	}
	t0 := time.Now()
	b, err := instrument.Instrument(instrument.Config{Dir: dir, Tests: []string{"."}, Out: filepath.Join(work, "build"),
		Instrument: []string{"github.com/execspec/execspec/executor", "github.com/execspec/execspec/properties/broken"}})
	check(err)
	bin := filepath.Join(work, "hookless.test")
	check(b.CompileTest(dir, bin))
	fmt.Printf("instrumented build: %.1fs\n", time.Since(t0).Seconds())
	return bin
}

// run runs one test of the binary in work (rapid's fail files go there)
// and returns the outcomes it reported and its output.
func run(bin, work, test string, env ...string) ([]harness.Outcome, string) {
	report := filepath.Join(work, "report.jsonl")
	_ = os.Remove(report)
	cmd := exec.Command(bin, "-test.run=^"+test+"$", "-test.v", "-test.timeout=2h")
	cmd.Dir = work
	cmd.Env = append(append(os.Environ(), harness.EnvSeed+"=1", harness.EnvReport+"="+report), env...)
	out, _ := cmd.CombinedOutput()
	outs, _ := harness.ReadReport(report) // what the run reported, up to a torn line
	return outs, string(out)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "hookless:", err)
		os.Exit(1)
	}
}
