package suite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/cmd/verify/internal/check"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/cmd/verify/internal/clitest"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
	"github.com/execspec/execspec/traces"
)

// TestMain keeps the files written where no flag says out of the
// user's cache directory.
func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

// verify runs verify run, and verify check on what it writes, as the
// command does.
var verify = clitest.Commands(Run, check.Check)

// TestRun runs verify run: a correct executor holds, a broken one is
// violated with a replay command, bad flags are usage errors.
func TestRun(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stdout []string
	}{
		{[]string{"run", "--executor", "fifo", "--checks", "5", "--property", "exactly-once,waker-during-poll"}, cli.ExitHolds,
			[]string{"exactly-once", "holds (5 cases", "fifo: holds"}},
		{[]string{"run", "--executor", "broken/double-enqueue", "--checks", "50", "--shrink-time", "200ms"}, cli.ExitViolated,
			[]string{"conformance (model conformance) violated", "enqueued twice", "then, as consequences:", "- no-poll-after-ready: ", "shrunk workload", "replay it", "run --executor broken/double-enqueue --cases exactly-once --seed "}},
		{[]string{"run", "--list"}, cli.ExitHolds, []string{"no-lost-wakeup", "broken/lost-wakeup", "worksteal"}},
		{[]string{"run", "--executor", "nosuch"}, cli.ExitUsage, nil},
		{[]string{"run", "--property", "nosuch"}, cli.ExitUsage, nil},
		{[]string{"run", "--checks", "0"}, cli.ExitUsage, nil},
		{[]string{"run", "extra"}, cli.ExitUsage, nil},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			t.Chdir(t.TempDir())
			code := verify(context.Background(), c.args, &out, &errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out.String(), errb.String())
			}
			clitest.WantAll(t, "stdout", out.String(), c.stdout...)
		})
	}
}

// TestRunReplay: the command a failure prints draws the same failure again.
func TestRunReplay(t *testing.T) {
	t.Chdir(t.TempDir())
	var out, errb bytes.Buffer
	if code := verify(context.Background(), []string{"run", "--executor", "broken/repoll-after-ready", "--checks", "50", "--shrink-time", "200ms"}, &out, &errb); code != cli.ExitViolated {
		t.Fatalf("exit %d, want %d:\n%s", code, cli.ExitViolated, out.String())
	}
	i := strings.Index(out.String(), " run --executor ")
	if i < 0 {
		t.Fatalf("no replay command:\n%s", out.String())
	}
	line := out.String()[i+1:]
	line = line[:strings.IndexByte(line, '\n')]
	out.Reset()
	if code := verify(context.Background(), strings.Fields(line), &out, &errb); code != cli.ExitViolated {
		t.Fatalf("replay %q: exit %d, want %d:\n%s", line, code, cli.ExitViolated, out.String())
	}
	if !strings.Contains(out.String(), "conformance (model conformance) violated") || !strings.Contains(out.String(), "but t1 is DONE") {
		t.Fatalf("replay %q found another failure:\n%s", line, out.String())
	}
}

// TestRunReplayExact: under the controller, the replay of a failure found
// in a race reproduces the first failing case's schedule: the same checksum.
func TestRunReplayExact(t *testing.T) {
	t.Chdir(t.TempDir())
	var out, errb bytes.Buffer
	args := []string{"run", "--executor", "broken/lost-wake-check-park", "--checks", "200", "--shrink-time", "300ms"}
	if code := verify(context.Background(), args, &out, &errb); code != cli.ExitViolated {
		t.Fatalf("exit %d, want %d:\n%s", code, cli.ExitViolated, out.String())
	}
	first := out.String()
	sum := regexp.MustCompile(`before shrinking: checksum ([0-9a-f]{16})`).FindStringSubmatch(first)
	cmd := regexp.MustCompile(`run --executor \S+ --cases \S+ --seed \d+ --checks 1`).FindString(first)
	if sum == nil || cmd == "" {
		t.Fatalf("no checksum or replay command:\n%s", first)
	}
	for range 2 {
		out.Reset()
		if code := verify(context.Background(), strings.Fields(cmd), &out, &errb); code != cli.ExitViolated {
			t.Fatalf("replay %q: exit %d:\n%s", cmd, code, out.String())
		}
		if !strings.Contains(out.String(), "before shrinking: checksum "+sum[1]) {
			t.Fatalf("replay %q: another schedule (want checksum %s):\nfirst:\n%s\nreplay:\n%s", cmd, sum[1], first, out.String())
		}
	}
}

// TestRunInterrupted: a cancelled run reports what it found so far, with
// the unknown exit code.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	if code := verify(ctx, []string{"run", "--executor", "fifo", "--checks", "5"}, &out, &errb); code != cli.ExitUnknown {
		t.Fatalf("exit %d, want %d:\n%s", code, cli.ExitUnknown, out.String())
	}
	if !strings.Contains(out.String(), "interrupted") {
		t.Fatalf("output does not say it was interrupted:\n%s", out.String())
	}
}

// TestRunFailureWritesTrace: a failure of an executor that reports events
// writes its trace, which verify check reads, and an HTML timeline.
func TestRunFailureWritesTrace(t *testing.T) {
	dir := t.TempDir()
	newWS, _ := executor.Builtin("worksteal")
	newEx := func() executor.Executor {
		return broken.Lying(newWS(), func(e traces.Event, r executor.Recorder) {
			if e.Kind != traces.KindSpawn || e.Task != 2 {
				r.Record(e)
			}
		})
	}
	rep := properties.Check(newEx, properties.Config{Only: []string{"linearizability"}, Checks: 30, ShrinkTime: 200 * time.Millisecond})
	if rep.Verdict() != checker.Violated {
		t.Fatalf("the lie was not caught: %v", rep.Verdict())
	}
	var out, errb bytes.Buffer
	f := &runFlags{executor: "lying", out: dir}
	printRunFailure(&out, &errb, f, rep.Results[0])
	jsonl := filepath.Join(dir, "run-lying-linearizability.jsonl")
	for _, name := range []string{jsonl, filepath.Join(dir, "run-lying-linearizability.html")} {
		if st, err := os.Stat(name); err != nil || st.Size() == 0 {
			t.Fatalf("%s not written (%v):\n%s\n%s", name, err, out.String(), errb.String())
		}
	}
	if !strings.Contains(out.String(), "trace: "+jsonl) || !strings.Contains(out.String(), "replay it") {
		t.Fatalf("output does not name the trace and the replay:\n%s", out.String())
	}
	out.Reset()
	if code := verify(context.Background(), []string{"check", jsonl}, &out, &errb); code == cli.ExitUsage {
		t.Fatalf("verify check cannot read the written trace:\n%s\n%s", out.String(), errb.String())
	}
}

// FuzzRunFlags: parsing and validating the flags of verify run never
// panics, and whatever validation accepts lies in the documented ranges.
func FuzzRunFlags(f *testing.F) {
	clitest.FuzzFlags(f, func(args []string) string {
		var r runFlags
		fs := runFlagSet(io.Discard, &r)
		if fs.Parse(args) != nil || cli.ValidateFlags(fs, runFlagSpecs(&r)) != nil || r.checks >= 1 && r.checks <= maxChecks && r.pct >= 0 && r.pct <= maxPCTDepth && r.shrink >= 0 {
			return ""
		}
		return fmt.Sprintf("checks %d pct %d shrink %v", r.checks, r.pct, r.shrink)
	}, "--checks 9223372036854775807", "--pct 1000000000 --uncontrolled")
}
