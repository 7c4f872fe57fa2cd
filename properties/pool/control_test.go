package pool

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/execspec/execspec/instrument"
	"github.com/execspec/execspec/instrument/harness"
	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/internal/testenv"
	"github.com/execspec/execspec/properties/pool/internal/isolate"
)

// TestControlledMode runs the tests of testdata/ctlpool — a small pool
// with deliberate bugs, checked by CheckOptions with no knowledge of the
// controlled runtime — as verify test does: the package rewritten for
// the runtime, each test run under control, one case per run. The
// correct pool passes every run; the lost wakeup after a grow is a
// progress finding, the Goexit leak a deadlock the scheduler decides,
// the negative WaitGroup counter on a pool goroutine a panic with its
// stack; each is shrunk, saved with its case inside the schedule file,
// and replays ten times with the same checksum.
var shrunkTasks = regexp.MustCompile(`\[case: (\d+) tasks`)

func TestControlledMode(t *testing.T) {
	testenv.GoBuild(t, "builds an instrumented test binary")
	dir, err := filepath.Abs(filepath.Join("testdata", "ctlpool"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	b, err := instrument.Instrument(instrument.Config{Dir: dir, Tests: []string{"."}, Out: filepath.Join(work, "build")})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(work, "ctlpool.test")
	if err := b.CompileTest(dir, bin); err != nil {
		t.Fatal(err)
	}
	sched := filepath.Join(work, "schedules")
	run := func(test string, count int, env ...string) []harness.Outcome {
		t.Helper()
		report := filepath.Join(work, test+".jsonl")
		_ = os.Remove(report)
		cmd := exec.Command(bin, "-test.run=^"+test+"$", "-test.count="+strconv.Itoa(count))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), harness.EnvOut+"="+sched, harness.EnvReport+"="+report)
		cmd.Env = append(cmd.Env, env...)
		out, _ := cmd.CombinedOutput()
		outs, err := harness.ReadReport(report)
		if err != nil {
			t.Fatalf("%s: %v\n%s", test, err, isolate.Tail(out, 3000))
		}
		return outs
	}
	const runs = 300
	if o := run("TestCorrect", 1, harness.EnvRuns+"="+strconv.Itoa(runs)); len(o) != 1 || o[0].FailedRun != 0 || o[0].Runs != runs {
		t.Fatalf("the correct pool under control: %+v", o)
	}
	// Early timers (verify test's default): time that a timer fired early
	// let pass while a goroutine of the case could run is not the pool's
	// (rt.EarlyTime): the correct pool passes every run, and the lost
	// wakeup after a grow is still a progress finding.
	early := rt.EnvEarlyTimers + "=1"
	if o := run("TestCorrect", 1, harness.EnvRuns+"="+strconv.Itoa(runs), early); len(o) != 1 || o[0].FailedRun != 0 || o[0].Runs != runs {
		t.Fatalf("the correct pool under control, early timers: %+v", o)
	}
	if o := run("TestGrowNoWake", 1, harness.EnvRuns+"="+strconv.Itoa(runs), early); len(o) != 1 || o[0].FailedRun == 0 || !strings.Contains(o[0].Error, "progress") {
		t.Errorf("TestGrowNoWake, early timers: want a progress finding, got %+v", o)
	}
	// Idle expiry (workers.go): a worker the purge stops, signalling
	// without the lock, is a progress finding named for it; acknowledged,
	// it is no finding, and another lost wakeup of the same pool (a
	// worker back from its task that signals nobody) is still one, named
	// for what it followed. The correct pool, purge and all, passes.
	for _, c := range []struct {
		test string
		want string // the finding's text, "" for none
	}{
		{"TestWorkersCorrect", ""},
		{"TestExpiryNoWake", "progress (after " + IdleExpiry + ")"},
		{"TestExpiryNoWakeKnown", ""},
		{"TestExpiryKnownEndNoWake", "progress (after task end)"},
	} {
		o := run(c.test, 1, harness.EnvRuns+"="+strconv.Itoa(runs), early)
		switch {
		case len(o) != 1:
			t.Errorf("%s: %+v", c.test, o)
		case c.want == "" && o[0].FailedRun != 0:
			t.Errorf("%s: want no finding in %d runs, got run %d: %s", c.test, runs, o[0].FailedRun, o[0].Error)
		case c.want != "" && (o[0].FailedRun == 0 || !strings.Contains(o[0].Error, c.want)):
			t.Errorf("%s: want a finding %q, got %+v", c.test, c.want, o[0])
		default:
			t.Logf("%s: %d runs, failed run %d: %.200s", c.test, o[0].Runs, o[0].FailedRun, o[0].Error)
		}
	}
	for _, c := range []struct{ test, kind, text string }{
		{"TestGrowNoWake", "fail", ""},
		{"TestGoexitLeaks", "deadlock", "Cond.Wait"},
		{"TestResizeWaits", "deadlock", "Resize"},
		{"TestGoexitLeaksPurge", "deadlock", "housekeeping"},
		{"TestPanicDoubleDone", "panic", "negative WaitGroup counter"},
	} {
		o := run(c.test, 1, harness.EnvRuns+"="+strconv.Itoa(runs))
		if len(o) != 1 || o[0].FailedRun == 0 || o[0].Kind != c.kind || !strings.Contains(o[0].Error, c.text) || o[0].Schedule == "" {
			t.Errorf("%s: want a %s (%q) with a schedule, got %+v", c.test, c.kind, c.text, o)
			continue
		}
		if _, meta, err := harness.LoadSchedule(o[0].Schedule); err != nil || meta["pool.workload"] == "" || meta["pool.test"] != c.test {
			t.Errorf("%s: the case inside the schedule file: %v %v", c.test, meta, err)
		}
		// Shrunk: the generated cases run up to 24 tasks; each defect
		// needs at most three.
		if m := shrunkTasks.FindStringSubmatch(o[0].Error); m == nil || m[1] > "4" || len(m[1]) > 1 {
			t.Errorf("%s: the finding's case is not shrunk to a few tasks: %s", c.test, o[0].Error)
		}
		// Ten replays in one process.
		replays := run(c.test, 10, harness.EnvSchedule+"="+o[0].Schedule)
		matched := 0
		for _, r := range replays {
			if r.Replayed && r.Kind == c.kind && r.Checksum == o[0].Checksum {
				matched++
			}
		}
		if matched != 10 {
			t.Errorf("%s: %d of %d replays reproduced run %d (%s, checksum %s): %+v", c.test, matched, len(replays), o[0].FailedRun, o[0].Kind, o[0].Checksum, replays)
		}
		t.Logf("%s: %s in run %d of %d, replayed %d/10", c.test, o[0].Kind, o[0].FailedRun, runs, matched)
		// The search went on past its finding: every run was made (and
		// the shrinker's and the replays' after them).
		if o[0].Runs < runs+10 {
			t.Errorf("%s: %d runs made; the search stopped at its finding", c.test, o[0].Runs)
		}
	}
	// An interrupt while shrinking (verify test kills the test binary on
	// Ctrl-C) leaves the finding as found: its schedule is saved, and
	// said on a progress line, before the shrinking begins, and it
	// replays to the same kind of finding.
	t.Run("interrupted shrink", func(t *testing.T) {
		dir2 := filepath.Join(work, "interrupted")
		cmd := exec.Command(bin, "-test.run=^TestGoexitLeaks$", "-test.v")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), harness.EnvOut+"="+dir2, harness.EnvRuns+"="+strconv.Itoa(runs))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var line string
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), harness.ProgressPrefix) && strings.Contains(sc.Text(), "shrinking it") {
				line = sc.Text()
				break
			}
		}
		_ = cmd.Process.Kill()
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		saved, _ := filepath.Glob(filepath.Join(dir2, "TestGoexitLeaks.*"))
		if line == "" || len(saved) != 1 || !strings.Contains(line, saved[0]) {
			t.Fatalf("no progress line naming the schedule before shrinking (%q), schedules %v", line, saved)
		}
		o := run("TestGoexitLeaks", 1, harness.EnvSchedule+"="+saved[0])
		if len(o) != 1 || !o[0].Replayed || o[0].Kind != "deadlock" {
			t.Errorf("the schedule saved before shrinking does not replay the deadlock: %+v", o)
		}
	})
	// Two defects in one pool: two findings, each with its schedule.
	if o := run("TestTwoBugs", 1, harness.EnvRuns+"="+strconv.Itoa(runs)); len(o) != 1 || o[0].FailedRun == 0 {
		t.Errorf("TestTwoBugs: %+v", o)
	}
	saved, _ := filepath.Glob(filepath.Join(sched, "TestTwoBugs.*"))
	if len(saved) != 2 {
		t.Errorf("TestTwoBugs: want a schedule for each of the two defects, found %v", saved)
	}
}
