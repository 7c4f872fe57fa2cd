package gotest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/instrument"
	"github.com/execspec/execspec/instrument/harness"
	"github.com/execspec/execspec/properties/coverage"
)

// verify cover --no-hook. The runs of the instrumented engine need the
// executor's package rewritten at build time, which this process cannot
// do to itself: it builds the test binary of properties/testdata/hookless
// from execspec's source with packages executor and properties/broken
// instrumented (kept in the user's cache directory, as verify test keeps
// its builds), runs its TestCoverJob with the run cfg describes, and reads
// back the result.

// execspecModule is the module whose source --no-hook builds from.
const execspecModule = "github.com/execspec/execspec"

// hooklessPackages are the packages --no-hook rewrites.
var hooklessPackages = []string{execspecModule + "/executor", execspecModule + "/properties/broken"}

// execspecSource returns the directory of execspec's source as the go
// command sees it from the working directory: the main module when it is
// execspec, else the version the main module requires.
func execspecSource() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", execspecModule).Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		why := "not found"
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			why = strings.TrimSpace(string(ee.Stderr))
		} else if err != nil {
			why = err.Error()
		}
		return "", fmt.Errorf("--no-hook builds an instrumented test binary from %s's source: run it in that module or in a module that requires it (go list -m %s: %s)", execspecModule, execspecModule, why)
	}
	return dir, nil
}

// CoverNoHook is verify cover --no-hook: it runs cfg on the instrumented
// engine, printing its progress on stderr unless quiet. It returns the
// result, or nil and the exit code after printing why there is none.
func CoverNoHook(ctx context.Context, cfg coverage.Config, quiet bool, stderr io.Writer) (*coverage.Result, int) {
	fail := func(code int, format string, a ...any) (*coverage.Result, int) {
		fmt.Fprintf(stderr, "verify cover: "+format+"\n", a...)
		return nil, code
	}
	// What the binary would refuse, refused before the build.
	if !slices.Contains(coverage.Strategies, cfg.Strategy) {
		return fail(cli.ExitUsage, "unknown strategy %q (want one of %v)", cfg.Strategy, coverage.Strategies)
	}
	if cfg.New == nil {
		if _, _, err := coverage.Model(cfg.Executor, cfg.Model); err != nil {
			return fail(cli.ExitUsage, "%v", err)
		}
	}
	if v, err := goVersion(); err != nil {
		return fail(cli.ExitUsage, "%v", err)
	} else if !supportedGo(v) {
		return fail(cli.ExitUsage, "--no-hook: %s is not supported: the instrumented engine needs go test -overlay, testing/synctest and the channel layout of Go 1.25 or 1.26", v)
	}
	root, err := execspecSource()
	if err != nil {
		return fail(cli.ExitUsage, "%v", err)
	}
	dir := filepath.Join(root, "properties", "testdata", "hookless")
	if _, err := os.Stat(dir); err != nil {
		return fail(cli.ExitUsage, "--no-hook: %v (the test package it builds)", err)
	}
	work, err := os.MkdirTemp("", "execspec-cover-")
	if err != nil {
		return fail(cli.ExitUsage, "%v", err)
	}
	defer os.RemoveAll(work)
	start := time.Now()
	cache, cerr := cli.DefaultOutDir("builds")
	if cerr != nil {
		cache = ""
	}
	b, err := instrument.Instrument(instrument.Config{Dir: dir, Tests: []string{"."}, Instrument: hooklessPackages, Out: filepath.Join(work, "build"), Cache: cache})
	if err != nil {
		return fail(cli.ExitUsage, "--no-hook: %v", err)
	}
	bin := filepath.Join(work, "cover.test")
	if err := b.CompileTest(dir, bin); err != nil {
		return fail(cli.ExitUsage, "--no-hook: %v", err)
	}
	if !quiet {
		fmt.Fprintf(stderr, "verify cover: instrumented %s (%s) in %.1fs\n", strings.Join(b.Packages, " "), countsText(b.Counts), time.Since(start).Seconds())
	}

	job := coverage.Job{Executor: cfg.Executor, Model: cfg.Model, Strategy: cfg.Strategy, PCTDepth: cfg.PCTDepth, Preemptions: cfg.Preemptions,
		Seed: cfg.Seed, Runs: cfg.Runs, Time: cfg.Time, Goal: cfg.Goal, StopAtFailure: cfg.StopAtFailure, Out: filepath.Join(work, "result.json")}
	js, err := json.Marshal(job)
	if err != nil {
		return fail(cli.ExitUsage, "%v", err)
	}
	// An interrupt reaches the binary as one: it stops its runs and still
	// writes what they reached.
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestCoverJob$", "-test.timeout=0")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Dir = work
	cmd.Env = append(os.Environ(), harness.EnvRuns+"=1", coverage.EnvJob+"="+string(js))
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return fail(cli.ExitUsage, "%v", err)
	}
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return fail(cli.ExitUsage, "%v", err)
	}
	var progress func(coverage.Progress)
	if cfg.Progress != nil {
		progress = cfg.Progress
	}
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if js, ok := strings.CutPrefix(line, coverage.ProgressPrefix); ok {
			var p coverage.Progress
			if progress != nil && json.Unmarshal([]byte(js), &p) == nil {
				progress(p)
			}
			continue
		}
		out.WriteString(line + "\n")
	}
	werr := cmd.Wait()
	res, err := coverage.ReadJobResult(job.Out)
	switch {
	case err == nil:
		return res, cli.ExitHolds
	case errors.Is(err, os.ErrNotExist):
		if ctx.Err() != nil {
			return fail(cli.ExitUnknown, "interrupted")
		}
		if strings.Contains(out.String(), "no tests to run") {
			return fail(cli.ExitUsage, "--no-hook: the execspec in %s has no TestCoverJob in properties/testdata/hookless: use the verify command of that version", root)
		}
		return fail(cli.ExitUsage, "--no-hook: the instrumented test binary gave no result (%v):\n%s", werr, tail(out.String(), 40))
	case ctx.Err() != nil:
		return fail(cli.ExitUnknown, "interrupted while building the model's state space")
	}
	return fail(cli.ExitUsage, "%v", err)
}
