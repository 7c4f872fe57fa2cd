//go:build unix

package gotest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
)

// A schedule as verify test saves it (TestABBA of verifytest_test.go).
const goodSchedule = "# rt.early-timers: 1\nexecspec-schedule v2\nsteps 7\nchecksum 0299791826223138\nchoices 5\n1/2! 1/2! 2/3! 2/3! 2/3!\n"

// TestVerifyTestHostileInputs: verify test given a bad --replay file, a
// flag a replay has no use for, or a bad --out is refused at once, with
// exit 2 and a message naming the path and what was expected, before
// anything is rewritten or built. Before, a named pipe given to --replay
// blocked the test binary that opened it until --timeout (10 minutes),
// and an empty, binary, truncated or newer schedule was a failed test
// (exit 1, "0 tests under control, 0 failed"); a schedule directory that
// was a file lost the schedule of every failure silently; and a schedule
// given without --run was replayed on every test of the package, each
// other test reported as failed (diverged).
func TestVerifyTestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("TestABBA.schedule", goodSchedule)
	renamed := file("good.schedule", goodSchedule)
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := file("huge.schedule", "")
	if err := os.Truncate(huge, maxSchedule+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	regular := file("regular", "keep")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"missing", []string{"--replay", filepath.Join(dir, "missing.schedule")}, []string{"missing.schedule", "no such file"}},
		{"empty", []string{"--replay", file("empty.schedule", "")}, []string{"empty.schedule", "empty", `expected "execspec-schedule v2"`}},
		{"binary", []string{"--replay", file("binary.schedule", "\x7fELF\x00\x01\x02\x1b[2J")}, []string{"binary.schedule", `expected "execspec-schedule v2"`}},
		{"truncated", []string{"--replay", file("truncated.schedule", goodSchedule[:60])}, []string{"truncated.schedule", `missing "choices" line`}},
		{"newer", []string{"--replay", file("newer.schedule", strings.Replace(goodSchedule, "v2", "v9", 1))}, []string{"newer.schedule", "reads schedule format versions 1 to 2", "a newer execspec wrote it"}},
		{"directory", []string{"--replay", dir}, []string{dir, "a directory, not a schedule file"}},
		{"fifo", []string{"--replay", fifo}, []string{fifo, "a named pipe, not a schedule file"}},
		{"huge", []string{"--replay", huge}, []string{"huge.schedule", "more than a schedule file holds"}},
		{"replay runs", []string{"--replay", good, "--runs", "5"}, []string{"--runs does not apply: a replay makes one run"}},
		{"replay of which test", []string{"--replay", renamed}, []string{"--replay " + renamed + ": give --run the test it was saved for"}},
		{"replay strategy", []string{"--replay", good, "--strategy", "pct"}, []string{"--strategy does not apply: a replay makes the schedule's choices"}},
		{"out fifo", []string{"--out", fifo}, []string{fifo, "a named pipe, not a directory"}},
		{"out file", []string{"--out", regular}, []string{regular, "a regular file, not a directory"}},
		{"out under a file", []string{"--out", filepath.Join(regular, "schedules")}, []string{"cannot be made", "not a directory"}},
		{"empty package", []string{""}, []string{"an empty package path: expected a package pattern"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			code, stdout, stderr := run(t, append([]string{"test", "."}, c.args...)...)
			if code != cli.ExitUsage || stdout != "" {
				t.Fatalf("exit %d, want %d; stdout %q\n%s", code, cli.ExitUsage, stdout, stderr)
			}
			wantAll(t, "stderr", stderr, c.want...)
			if strings.Contains(stderr, "rewriting") || strings.ContainsRune(stderr, 0x1b) {
				t.Errorf("rewrote before refusing, or passed a control byte on:\n%q", stderr)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v to refuse", d)
			}
		})
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced: %v, %v", st, err)
	}
	if b, err := os.ReadFile(regular); err != nil || string(b) != "keep" {
		t.Errorf("the regular file was changed: %q, %v", b, err)
	}
	// A good schedule is accepted (the run goes on to the build, which
	// fails here for want of a module: a different message).
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"--replay", good}, {"--replay", renamed, "--run", "^TestABBA$"}, {"--replay", file("TestProp-20260101-1.fail", "# rapid failfile")}} {
		if code, _, stderr := run(t, append([]string{"test", ".", "-q"}, args...)...); code != cli.ExitUsage || strings.Contains(stderr, "--replay") {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
	// A package directory that does not exist matches no package; it
	// was "does not build: -: stat ...".
	if err := os.WriteFile("go.mod", []byte("module m\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "test", "./nosuchdir", "-q")
	if code != cli.ExitUsage || strings.Contains(stderr, "-: ") {
		t.Errorf("./nosuchdir: exit %d\n%s", code, stderr)
	}
	wantAll(t, "stderr", stderr, "nosuchdir matches no package", "directory not found")
}

// TestVerifyTestInterruptedBuild: Ctrl-C while the packages are rewritten
// and built (a minute or more the first time with --std-sync) ends verify
// test at once with exit 3, saying no test ran. Before, the interrupt was
// obeyed only once the build was done (69 s after the signal, measured
// with GOFLAGS=-a and --std-sync).
func TestVerifyTestInterruptedBuild(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("go.mod", []byte("module m\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	code := verify(ctx, []string{"test", ".", "--no-cache"}, &out, &errb)
	if code != cli.ExitUnknown || !strings.Contains(errb.String(), "interrupted while rewriting and building . (") || !strings.Contains(errb.String(), "no test ran") {
		t.Fatalf("exit %d, want %d:\n%s", code, cli.ExitUnknown, errb.String())
	}
}

// TestInterruptible: interruptible returns as soon as its context is
// done, while the work it runs is still blocked, and returns the work's
// result when that comes first.
func TestInterruptible(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	v, err := interruptible(ctx, func() (int, error) { <-release; return 1, nil })
	if v != 0 || !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("%d, %v after %v; want 0, context.Canceled at once", v, err, time.Since(start))
	}
	v, err = interruptible(context.Background(), func() (int, error) { return 7, errors.New("built") })
	if v != 7 || err == nil || err.Error() != "built" {
		t.Fatalf("%d, %v; want the work's own result", v, err)
	}
}

// TestReplayedTest: the test a schedule or failfile replays, read from
// the names rt and rapid give them.
func TestReplayedTest(t *testing.T) {
	for path, want := range map[string]string{
		"/c/TestABBA.schedule":                              "^TestABBA$",
		"TestPool.no-crash.schedule":                        "^TestPool$",
		"Test_x_y.schedule":                                 "^Test.x.y$",
		"testdata/rapid/TestRun/TestRun-20260101-1234.fail": "^TestRun$",
		"good.schedule":                                     "",
		"TestABBA.txt":                                      "",
		"Test(x).schedule":                                  "",
	} {
		if got := replayedTest(path); got != want {
			t.Errorf("replayedTest(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestReadLines: every line is read, however long (cut to the limit,
// with a note of how much was left out), and the last one without its
// newline too; the reader is read to its end, so that a writer never
// blocks on it.
func TestReadLines(t *testing.T) {
	long := strings.Repeat("x", 3<<20)
	in := "a\n" + long + "\n" + "b\n" + long[:100] + "\nlast"
	var got []string
	if err := readLines(strings.NewReader(in), 1<<20, func(l string) { got = append(got, l) }); err != nil {
		t.Fatal(err)
	}
	cut := long[:1<<20] + " [... 2097152 more bytes of this line left out]"
	want := []string{"a", cut, "b", long[:100], "last"}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %d bytes %.60q, want %d bytes %.60q", i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
}

// TestTestOutputBounded: past its limit (maxTestOutput) only the test events
// and the last lines are kept, and the output says how much was left out.
func TestTestOutputBounded(t *testing.T) {
	o := testOutput{limit: 64 << 10}
	line := strings.Repeat("y", 1<<10-1)
	o.add("=== RUN   TestA")
	for range 2 * o.limit >> 10 {
		o.add(line)
	}
	o.add("--- FAIL: TestA (1.00s)")
	o.add("the last line")
	out := o.String()
	if len(out) > o.limit+(tailLines+10)<<10 {
		t.Fatalf("kept %d bytes", len(out))
	}
	wantAll(t, "output", out, "=== RUN   TestA", "--- FAIL: TestA (1.00s)", "the last line", "bytes left out]")
	if !strings.HasSuffix(out, "the last line\n") {
		t.Errorf("the output does not end with the last line")
	}
}

// TestVerifyTestLongLine: a test that prints a line longer than 16 MiB
// is reported as it ends. Before, the bufio.Scanner that read go test's
// output stopped at it, nobody read the pipe any more, and verify test
// hung with the test binary blocked on its write (past --timeout: the
// timeout's own report blocked too).
func TestVerifyTestLongLine(t *testing.T) {
	demoModule(t, map[string]string{
		"long_test.go": "package demo\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n\t\"testing\"\n)\n\nfunc TestLong(t *testing.T) {\n\tfmt.Println(strings.Repeat(\"x\", 20<<20))\n\tfor range 1000 {\n\t\tfmt.Println(strings.Repeat(\"y\", 1000))\n\t}\n\tt.Fatal(\"the end\")\n}\n",
	})
	done := make(chan struct{})
	var code int
	var stderr string
	go func() {
		defer close(done)
		code, _, stderr = run(t, "test", ".", "--runs", "1", "-q", "--timeout", "5m")
	}()
	select {
	case <-done:
	case <-time.After(4 * time.Minute):
		t.Fatal("verify test hung on a long line of output")
	}
	if code != cli.ExitViolated || !strings.Contains(stderr, "the end") {
		t.Fatalf("exit %d, want %d naming the failure\n%.2000s", code, cli.ExitViolated, stderr)
	}
}

// TestVerifyTestSettleStuck: without --std-sync, a goroutine of a package
// left out that waits for a sync.Mutex a controlled goroutine holds keeps
// the scheduler from settling; rt's watchdog stops the test binary
// (EXECSPEC_SETTLE_LIMIT, here 2s) and verify test reports it as unknown
// (exit 3) with the goroutine named, not after --timeout (10 minutes).
func TestVerifyTestSettleStuck(t *testing.T) {
	demoModule(t, map[string]string{
		"helper/helper.go": "package helper\n\nimport \"sync\"\n\ntype Shared struct{ mu sync.Mutex }\n\nfunc (s *Shared) Lock()   { s.mu.Lock() }\nfunc (s *Shared) Unlock() { s.mu.Unlock() }\n\n// Contend waits for the lock on a goroutine of its own.\nfunc (s *Shared) Contend() <-chan struct{} {\n\tc := make(chan struct{})\n\tgo func() {\n\t\ts.mu.Lock()\n\t\ts.mu.Unlock()\n\t\tclose(c)\n\t}()\n\treturn c\n}\n",
		"held_test.go":     "package demo\n\nimport (\n\t\"testing\"\n\n\t\"demo/helper\"\n)\n\nfunc TestHeld(t *testing.T) {\n\tvar s helper.Shared\n\ts.Lock()\n\tdone := s.Contend()\n\tch := make(chan int)\n\tgo func() { ch <- 1 }()\n\t<-ch\n\ts.Unlock()\n\t<-done\n}\n",
	})
	t.Setenv("EXECSPEC_SETTLE_LIMIT", "2s")
	start := time.Now()
	code, _, stderr := run(t, "test", ".", "--runs", "5", "-q", "--timeout", "5m")
	if code != cli.ExitUnknown {
		t.Fatalf("exit %d, want %d\n%s", code, cli.ExitUnknown, stderr)
	}
	wantAll(t, "stderr", stderr, "the scheduler waited", "sync.Mutex.Lock", "helper.go:14", "--std-sync")
	t.Logf("stopped after %v", time.Since(start))
}

// TestVerifyTestNoYieldLoop: a controlled goroutine that loops without a
// yield point holds control for ever; rt's watchdog sees the steps stand
// still (EXECSPEC_SETTLE_LIMIT, here 2s) and verify test reports it as
// unknown (exit 3) with the loop's file:line, not after --timeout.
func TestVerifyTestNoYieldLoop(t *testing.T) {
	demoModule(t, map[string]string{
		"spin_test.go": "package demo\n\nimport \"testing\"\n\nvar stop bool\n\nfunc TestSpin(t *testing.T) {\n\tfor !stop {\n\t}\n}\n",
	})
	t.Setenv("EXECSPEC_SETTLE_LIMIT", "2s")
	code, _, stderr := run(t, "test", ".", "--runs", "5", "-q", "--timeout", "5m")
	if code != cli.ExitUnknown {
		t.Fatalf("exit %d, want %d\n%s", code, cli.ExitUnknown, stderr)
	}
	wantAll(t, "stderr", stderr, "without reaching a yield point", "spin_test.go:8", "EXECSPEC_SETTLE_LIMIT")
}

// TestTestLogKeepsPrints: with -v, what the code under test printed (a
// println while debugging a library, unindented) is shown with the test's
// t.Log lines; go test's own lines and another test's output are not.
func TestTestLogKeepsPrints(t *testing.T) {
	out := "=== RUN   TestA\n" +
		"debug: worker 3 exits\n" +
		"    a_test.go:9: logged\n" +
		"--- PASS: TestA (0.01s)\n" +
		"=== RUN   TestB\n" +
		"debug: not A's\n" +
		"--- PASS: TestB (0.00s)\n" +
		"PASS\n" +
		"ok  \tpkg\t0.02s\n"
	got := testLog(out, "TestA")
	want := "debug: worker 3 exits\n  a_test.go:9: logged\n"
	if got != want {
		t.Errorf("testLog = %q, want %q", got, want)
	}
}
