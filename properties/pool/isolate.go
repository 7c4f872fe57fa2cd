package pool

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/execspec/execspec/properties/pool/internal/isolate"
)

// Crash isolation. A pool that crashes the process would end the test
// binary and lose the run, so CheckOptions runs its cases in a child
// (package internal/isolate: the test binary, re-run for this test
// alone). The child runs Explore from a given case and writes a record
// before each case, before each shrink, and its report at the end. When
// the child dies before its report, its last record names the case that
// crashed: a finding (no-crash, the case as drawn: a crash cannot be
// shrunk in-process), and a new child goes on from the next case, told
// which defects were already reported.
//
//	parent                                child (same test, same binary)
//	exploreFor: start child from case k   exploreFor: EXECSPEC_POOL_CHILD set
//	                                      explore(from k), a record per case
//	wait; report record? merge, done      report record; SkipNow
//	no report: crash at the last case,
//	  start a child from that case + 1

// -pool.from skips the first cases of a run, drawing them without running
// them: -pool.from=17 -pool.cases=18 runs case 17 alone, as a crash
// finding suggests.
var flagFrom = flag.Int("pool.from", 0, "pool: run the cases from this one on (the earlier ones are drawn, not run)")

// progress is one line of the progress file.
type progress struct {
	Case      int            `json:"case"`
	Workload  string         `json:"workload,omitempty"`
	Pool      string         `json:"pool,omitempty"`
	Exercised map[string]int `json:"exercised,omitempty"`
	Shrinking *Finding       `json:"shrinking,omitempty"` // the finding being shrunk, as found
	Report    *Report        `json:"report,omitempty"`
}

// exploreFor runs Explore for t: in a child process unless cfg.InProcess,
// or, in a child, the part its parent asked for.
func exploreFor(t *testing.T, newPool func(Options) Pool, cfg Config) *Report {
	t.Helper()
	if underControl() {
		return controlledExplore(t, newPool, cfg)
	}
	call := isolate.Calls(t.Name()) // which CheckOptions call of the test
	if path, mine := isolate.InChild(call); path != "" {
		if !mine {
			t.SkipNow() // another CheckOptions call of this test: its own child runs it
		}
		runChild(t, newPool, cfg, path)
		t.SkipNow()
	}
	from := *flagFrom
	if cfg.InProcess {
		return explore(newPool, cfg, exploreHooks{from: from})
	}
	exe, err := os.Executable()
	if err != nil {
		t.Logf("pool: cases run in this process (the test binary cannot be re-run: %v); a crash of the pool ends it", err)
		return explore(newPool, cfg, exploreHooks{from: from})
	}
	return runIsolated(t, exe, call, cfg.withDefaults(), from)
}

// runChild is the child's side: explore from the case the parent named,
// a record before each case, the report at the end.
func runChild(t *testing.T, newPool func(Options) Pool, cfg Config, path string) {
	log, err := isolate.OpenLog(path)
	if err != nil {
		t.Fatalf("pool: child: %v", err)
	}
	defer log.Close()
	seen, err := isolate.Seen() // the keys already reported
	if err != nil {
		t.Fatalf("pool: child: %v", err)
	}
	write := func(p progress) {
		if err := log.Write(p); err != nil {
			t.Fatalf("pool: child: %v", err)
		}
	}
	rep := explore(newPool, cfg, exploreHooks{
		from: *flagFrom,
		seen: seen,
		begin: func(i int, w Workload) {
			ex := map[string]int{}
			exercised(w, abilities{}, ex)
			write(progress{Case: i, Workload: w.String(), Pool: w.Options.String(), Exercised: ex})
		},
		shrinking: func(i int, fd *Finding) { write(progress{Case: i, Shrinking: fd}) },
	})
	write(progress{Case: -1, Report: rep})
}

// runIsolated is the parent's side: children until the cases are done,
// a finding per distinct crash.
func runIsolated(t *testing.T, exe string, call int, cfg Config, from int) *Report {
	t.Helper()
	start := time.Now()
	total := &Report{Known: map[string]int{}, Exercised: map[string]int{}, Mode: ModeStress}
	path := filepath.Join(t.TempDir(), "progress.jsonl")
	var seen []string
	crashes := 0
	for from < cfg.Cases {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatalf("pool: %v", err)
		}
		out, runErr := runChildProcess(t, exe, call, path, seen, from)
		recs, err := isolate.Read[progress](path)
		if err != nil {
			t.Fatalf("pool: reading the child's progress: %v", err)
		}
		if n := len(recs); n > 0 && recs[n-1].Report != nil {
			merge(total, recs[n-1].Report)
			break
		}
		// The child died before its report.
		last, cases := progress{Case: from}, 0
		for _, r := range recs {
			if r.Shrinking == nil && r.Report == nil {
				cases++
				for k, n := range r.Exercised {
					total.Exercised[k] += n
				}
			}
			if r.Workload != "" {
				last.Workload, last.Pool = r.Workload, r.Pool
			}
			last.Case, last.Shrinking = r.Case, r.Shrinking
		}
		total.Cases += cases
		if len(recs) == 0 {
			// It died before its first case: nothing to go on from.
			t.Fatalf("pool: the child process ended before its first case (%v):\n%s", runErr, isolate.Tail(out, 4000))
		}
		if s := last.Shrinking; s != nil && !slices.Contains(seen, s.Key()) {
			// Found, then lost to the crash while being shrunk: reported
			// as found.
			s.Detail += " (not shrunk: the pool crashed while this case was being shrunk)"
			s.After, s.Case = time.Since(start), last.Case
			total.Findings = append(total.Findings, s)
			seen = append(seen, s.Key())
		}
		f := crashFinding(out, runErr, last, cfg.Seed)
		if !known(cfg.Known, f) && !slices.Contains(seen, f.Key()) {
			f.After, f.Case = time.Since(start), last.Case
			total.Findings = append(total.Findings, f)
			seen = append(seen, f.Key())
		} else {
			total.Known[f.Key()]++
		}
		if crashes++; crashes >= cfg.MaxCrashes {
			total.Stopped = fmt.Sprintf("stopped after %d crashing cases", crashes)
			break
		}
		from = last.Case + 1
	}
	total.Elapsed = time.Since(start)
	return total
}

// runChildProcess runs the test binary for this test alone, as a child,
// and returns the end of what it printed.
func runChildProcess(t *testing.T, exe string, call int, path string, seen []string, from int) ([]byte, error) {
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Second))
		defer cancel()
	}
	args := []string{
		"-test.run=" + isolate.Pattern(t.Name()),
		"-test.timeout=0", // the parent's deadline bounds it
		"-pool.from=" + strconv.Itoa(from),
		"-pool.cases=" + strconv.Itoa(*flagCases),
		"-pool.seed=" + strconv.FormatUint(*flagSeed, 10),
	}
	if f := flag.Lookup("test.cpu"); f != nil && f.Value.String() != "" {
		args = append(args, "-test.cpu="+f.Value.String())
	}
	return isolate.Run(ctx, exe, args, isolate.Env(path, call, seen))
}

// merge adds a child's report to the total.
func merge(total, r *Report) {
	total.Findings = append(total.Findings, r.Findings...)
	for k, n := range r.Known {
		total.Known[k] += n
	}
	for k, n := range r.Exercised {
		total.Exercised[k] += n
	}
	total.Cases += r.Cases
	total.Abilities = r.Abilities
	if r.Stopped != "" {
		total.Stopped = r.Stopped
	}
}

// crashFinding describes the crash of a child in the case last: the
// panic's or fatal error's first line, the crashing goroutine's stack,
// and the function of the pool it crashed in.
func crashFinding(out []byte, runErr error, last progress, seed uint64) *Finding {
	f := &Finding{Property: NoCrash, Pool: last.Pool}
	if c, ok := isolate.ParseCrash(out); ok {
		f.Detail = "the process crashed: " + c.Message
		f.Stack, f.Op = c.Stack, c.Site
	} else {
		f.Detail = fmt.Sprintf("the process ended without a panic (os.Exit or a signal): %v", runErr)
		f.Stack = isolate.Tail(out, 4000)
	}
	where := fmt.Sprintf("case %d as drawn from seed %d (replay: -pool.seed=%d -pool.from=%d -pool.cases=%d)", last.Case, seed, seed, last.Case, last.Case+1)
	if last.Shrinking != nil {
		where += ", while shrinking its " + last.Shrinking.Key() + " finding"
	}
	f.Workload = where
	if last.Workload != "" {
		f.Workload += ": " + last.Workload
	}
	return f
}
