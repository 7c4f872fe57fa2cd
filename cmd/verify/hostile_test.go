package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/cmd/verify/internal/clitest"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/traces"
)

// The hostile corpus: every attack on verify that was ever found, kept as a
// test. Each runs the built binary as a subprocess — under a hard address
// space limit (ulimit -v), with its peak RSS read from the kernel and
// asserted — and checks the exit code, that no panic or runtime error
// reached the user, and that no terminal control byte from the input
// reached the terminal.

const (
	hostileAS     = 1 << 30   // ulimit -v for every run, bytes: a runaway allocation dies, it cannot take the machine
	hostileRSS    = 100 << 20 // peak RSS allowed for check and replay
	hostileRSSBig = 200 << 20 // for model and run, whose engines hold more
	hostileWait   = 20 * time.Second
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

// TestMain runs the test binary as the command when
// EXECSPEC_VERIFY_MAIN=1 (TestSwarmProcessesMerge starts it so, as
// separate processes), and removes the command built for the hostile
// corpus after the tests.
func TestMain(m *testing.M) {
	if os.Getenv("EXECSPEC_VERIFY_MAIN") == "1" {
		os.Exit(dispatch(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	if os.Getenv("EXECSPEC_HOSTILE_LAUNCH") == "1" {
		os.Exit(launch(os.Args[1:]))
	}
	// The files written where no flag says go to the user's cache
	// directory: the tests' go to one of their own.
	removeCache := clitest.TempCache()
	code := m.Run()
	removeCache()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// verifyBinary builds the command once per test binary (without -race: the
// subprocess is what is measured).
func verifyBinary(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the hostile corpus reads peak RSS and sets ulimit the Linux way")
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "verify-hostile-")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "verify")
		out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

type hostileRun struct {
	code           int
	stdout, stderr string
	rss            int64 // peak resident set, bytes
	cmd            *exec.Cmd
	args           []string
	report         *os.File // the launcher's report
	reportR        *bufio.Reader
	stdoutBuf      *bytes.Buffer
	stderrBuf      *bytes.Buffer
	started        bool // the launcher said it passes signals on
}

// startVerify starts the binary with args under the address-space limit;
// stdin, when not nil, is its standard input, and stdout, when not nil,
// replaces the captured standard output.
//
// The binary is started by a launcher (this test binary again, see
// launch), not by the test process itself: Linux carries the peak RSS of
// the process that execs over into the new program's (ru_maxrss is kept
// across exec), so a binary started straight from a test process that
// has grown past the bound would inherit the test's peak, not show its
// own. The launcher is small, so what it passes on is small too.
func startVerify(t *testing.T, dir string, stdin io.Reader, stdout *os.File, args ...string) *hostileRun {
	t.Helper()
	bin := verifyBinary(t)
	report, reportW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], append([]string{fmt.Sprint(hostileAS >> 10), bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTRACEBACK=all", "EXECSPEC_HOSTILE_LAUNCH=1")
	cmd.ExtraFiles = []*os.File{reportW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a hang is killed with its launcher
	r := &hostileRun{cmd: cmd, args: args, report: report, reportR: bufio.NewReader(report), stdoutBuf: &bytes.Buffer{}, stderrBuf: &bytes.Buffer{}}
	cmd.Stdin = stdin
	if stdout != nil {
		cmd.Stdout = stdout
	} else {
		cmd.Stdout = r.stdoutBuf
	}
	cmd.Stderr = r.stderrBuf
	err = cmd.Start()
	reportW.Close()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// launch is the launcher of startVerify: args are the address-space limit
// in KiB, the binary and its arguments. It runs the binary under that
// limit with the launcher's standard files, passes SIGINT and SIGTERM on to
// it, and writes "started" to file descriptor 3 once it passes signals on
// and "EXIT-CODE PEAK-RSS-KIB" when the binary ends; its own exit code is
// the binary's.
func launch(args []string) int {
	report := os.NewFile(3, "report")
	cmd := exec.Command("sh", append([]string{"-c", `ulimit -v "$0" && exec "$@"`, args[0]}, args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		return 125
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	fmt.Fprintln(report, "started")
	cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) // int32 on 386
	}
	fmt.Fprintf(report, "%d %d\n", code, rss)
	return max(code, 0)
}

// wait waits for the run to end (at most hostileWait) and fills in the
// results.
func (r *hostileRun) wait(t *testing.T) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(hostileWait):
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("%v: still running after %v (a hang)", r.args, hostileWait)
	}
	b, _ := io.ReadAll(r.reportR)
	r.report.Close()
	b = bytes.TrimPrefix(b, []byte("started\n"))
	var rssKiB int64
	if _, err := fmt.Sscan(string(b), &r.code, &rssKiB); err != nil {
		t.Fatalf("%v: no report from the launcher (%q): exit %d", r.args, b, r.cmd.ProcessState.ExitCode())
	}
	r.rss = rssKiB << 10 // kilobytes on Linux
	r.stdout, r.stderr = r.stdoutBuf.String(), r.stderrBuf.String()
}

func runVerify(t *testing.T, dir string, args ...string) *hostileRun {
	t.Helper()
	r := startVerify(t, dir, nil, nil, args...)
	r.wait(t)
	return r
}

// clean checks what every run must satisfy: no panic, no runtime error, no
// control byte of the input on the terminal, bounded lines, bounded memory.
func (r *hostileRun) clean(t *testing.T, rssLimit int64) {
	t.Helper()
	all := r.stdout + r.stderr
	for _, bad := range []string{"panic:", "fatal error:", "goroutine ", "runtime error", "[signal "} {
		if strings.Contains(all, bad) {
			t.Errorf("%q reached the user:\n%s", bad, clipForLog(all))
		}
	}
	for _, c := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\r"} {
		if strings.Contains(all, c) {
			t.Errorf("a raw %q from the input reached the terminal:\n%q", c, clipForLog(all))
		}
	}
	for _, l := range strings.Split(all, "\n") {
		if len(l) > cli.MaxLineBytes+100 {
			t.Errorf("a line of %d bytes (bound %d)", len(l), cli.MaxLineBytes)
			break
		}
	}
	if r.rss > rssLimit {
		t.Errorf("peak RSS %d MB, bound %d MB", r.rss>>20, rssLimit>>20)
	}
}

func clipForLog(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}

// TestHostileCorpus runs every trace of testdata/hostile through check and
// replay.
func TestHostileCorpus(t *testing.T) {
	wd, _ := os.Getwd()
	want := map[string]int{ // exit code of check; replay exits the same unless noted
		"bad_utf8_header.jsonl": exitUsage, "binary.jsonl": exitUsage, "blank_only.jsonl": exitUsage,
		"dup_config_key.jsonl": exitUsage, "dup_key.jsonl": exitUsage, "empty.jsonl": exitUsage,
		"escape_detail.jsonl": exitViolated, "escape_executor.jsonl": exitUnknown, "header_no_newline.jsonl": exitHolds,
		"huge_workers.jsonl": exitUsage, "negative_workers.jsonl": exitUsage, "not_object.jsonl": exitUsage,
		"null_config.jsonl": exitUsage, "null_policy.jsonl": exitUsage, "seq_overflow.jsonl": exitUsage,
		"task_beyond_limit.jsonl": exitUnknown, "task_max_int.jsonl": exitUnknown, "text_escape.txt": exitViolated,
		"text_huge_workers.txt": exitUsage, "truncated.jsonl": exitUsage, "violation.jsonl": exitViolated,
		"seq_backwards.jsonl": exitViolated, // a violation of no rule: named by its premise, never "Rule(0)"
		"duplicate_seq.jsonl": exitViolated, // two events at one position of the clock
		// Fields that mean nothing where they stand, and malformed events
		// the reader cannot see (they need the header or the poll): bad
		// input, not a violation by the executor.
		"queue_on_stop.jsonl": exitUsage, "priority_under_fifo.jsonl": exitUsage, "aging_under_fifo.jsonl": exitUsage,
		"poll_two_futures.jsonl": exitUsage, "take_unobserved.jsonl": exitUsage, "slice_poll_no_time.jsonl": exitUsage,
		// The shapes a take from the middle of the global queue made
		// quadratic (bench/gentrace -priority, -intervals), small: the
		// policy's pick and its refusals, a reorder of overlapping pushes
		// and a push that did not overlap.
		"priority_wrong_pick.jsonl": exitViolated, "priority_aging_ignored.jsonl": exitViolated,
		"intervals_reverse.jsonl": exitHolds, "intervals_reverse_owed.jsonl": exitViolated,
	}
	files, err := filepath.Glob(filepath.Join("testdata", "hostile", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		code, ok := want[name]
		if !ok {
			t.Errorf("%s: no expected exit code in the table", name)
			continue
		}
		for _, sub := range []string{"check", "replay"} {
			t.Run(sub+"/"+name, func(t *testing.T) {
				r := runVerify(t, wd, sub, f)
				r.clean(t, hostileRSS)
				if r.code != code {
					t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, clipForLog(r.stdout), r.stderr)
				}
				if strings.Contains(r.stdout+r.stderr, "Rule(") {
					t.Errorf("a rule printed as a number:\n%s", r.stdout)
				}
				if code == exitUsage && !strings.Contains(r.stderr, name) {
					t.Errorf("the message does not name the file:\n%s", r.stderr)
				}
				if sub == "check" && name == "task_beyond_limit.jsonl" && !strings.Contains(r.stdout, "conform.MaxTask") {
					t.Errorf("the limit is not named:\n%s", r.stdout)
				}
			})
		}
	}
}

// TestHostileFlags: every out-of-range or inapplicable flag is refused
// with exit 2 and a message naming it, before any work.
func TestHostileFlags(t *testing.T) {
	wd, _ := os.Getwd()
	v := filepath.Join("testdata", "hostile", "violation.jsonl")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"check", "--last", "9223372036854775806", v}, "--last"},
		{[]string{"check", "--last", "1000000000", v}, "--last"},
		{[]string{"check", "--last", "-1", v}, "--last"},
		{[]string{"check", "--linearizability", "--lin-budget", "-1s", v}, "--lin-budget"},
		{[]string{"check", "--lin-budget", "1s", v}, "--lin-budget does not apply"},
		{[]string{"check", "--stuck-after", "2s", v}, "--stuck-after does not apply"},
		{[]string{"check", "--html", "a.html", "--chrome", "a.html", v}, "same file"},
		{[]string{"model", "--local-cap", "0"}, "--local-cap 0"},
		{[]string{"model", "--wakes", "0"}, "--wakes 0"},
		{[]string{"model", "--max-memory", "-1"}, "--max-memory"},
		{[]string{"model", "--max-states", "-5"}, "--max-states"},
		{[]string{"model", "--timeout", "-1s"}, "--timeout"},
		{[]string{"model", "--parallel", "-1"}, "--parallel"},
		{[]string{"model", "--parallel", "1000000"}, "--parallel"},
		{[]string{"model", "--policy", "fifo", "--steal-half"}, "--steal-half does not apply"},
		{[]string{"model", "--policy", "fifo", "--aging", "3"}, "--aging does not apply"},
		{[]string{"model", "--property", "fairness"}, "needs --endless"},
		{[]string{"run", "--checks", "9223372036854775807", "--property", "exactly-once"}, "--checks"},
		{[]string{"run", "--checks", "0"}, "--checks"},
		{[]string{"run", "--pct", "1000000000"}, "--pct"},
		{[]string{"run", "--uncontrolled", "--pct", "3"}, "--pct does not apply"},
		{[]string{"cover", "--strategy", "pct", "--pct-depth", "1000000000"}, "--pct-depth"},
		{[]string{"run", "--skip", allPropertyNames()}, "no property to check"},
		{[]string{"run", "--skip", "exactly-once", "--property", "exactly-once"}, "both selected"},
		{[]string{"run", "--cases", "fairness", "--property", "exactly-once"}, "not selected"},
		{[]string{"cover", "--local-cap", "0"}, "--local-cap 0"},
		{[]string{"cover", "--pendings", "0"}, "--pendings 0"},
		{[]string{"cover", "--workers", "0"}, "--workers 0"},
		{[]string{"cover", "--tasks", "0"}, "--tasks 0"},
		{[]string{"cover", "--time", "0"}, "--time 0s"},
		{[]string{"cover", "--runs", "0"}, "--runs 0"},
		{[]string{"cover", "--goal", "NaN"}, "--goal NaN"},
		{[]string{"cover", "--pct-depth", "5"}, "--pct-depth does not apply"},
		{[]string{"cover", "--strategy", "guided", "--preemptions", "2"}, "--preemptions does not apply"},
		{[]string{"cover", "--executor", "fifo", "--workers", "3"}, "--workers does not apply"},
		{[]string{"cover", "--executor", "priority", "--local-cap", "3"}, "--local-cap does not apply"},
		{[]string{"model", "--seed", "5"}, "--seed does not apply"},
		{[]string{"model", "--hashes", "4"}, "--hashes does not apply"},
		{[]string{"replay", "--from", "0", v}, "--from 0"},
		{[]string{"model", "--bitstate", "1", "--swarm", "1/9223372036854775807"}, "--swarm"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := runVerify(t, wd, c.args...)
			r.clean(t, hostileRSS)
			if r.code != exitUsage || !strings.Contains(r.stderr, c.msg) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", r.code, exitUsage, c.msg, r.stdout, r.stderr)
			}
		})
	}
}

// TestHostileOutputs: output files never go through a planted link or onto
// an input; a failed output keeps the verdict; a failed stdout is exit 2.
func TestHostileOutputs(t *testing.T) {
	wd, _ := os.Getwd()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "hostile", "violation.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	conforms, err := os.ReadFile(filepath.Join("testdata", "check", "conforms.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "run.jsonl")
	ok := filepath.Join(dir, "ok.jsonl")
	os.WriteFile(in, src, 0o644)
	os.WriteFile(ok, conforms, 0o644)

	t.Run("html onto the input", func(t *testing.T) {
		r := runVerify(t, wd, "check", "--html", in, in)
		r.clean(t, hostileRSS)
		if r.code != exitUsage && r.code != exitViolated || !strings.Contains(r.stderr, "output file is one of the inputs") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
		if b, _ := os.ReadFile(in); !bytes.Equal(b, src) {
			t.Error("the input trace was overwritten")
		}
	})
	t.Run("html through a planted link", func(t *testing.T) {
		victim := filepath.Join(dir, "victim")
		os.WriteFile(victim, []byte("keep"), 0o644)
		link := filepath.Join(dir, "page.html")
		os.Symlink(victim, link)
		r := runVerify(t, wd, "check", "--html", link, ok)
		r.clean(t, hostileRSS)
		if b, _ := os.ReadFile(victim); string(b) != "keep" {
			t.Error("the link's target was overwritten")
		}
	})
	t.Run("failed output keeps the verdict", func(t *testing.T) {
		r := runVerify(t, wd, "check", "--html", filepath.Join(dir, "no", "such", "dir.html"), ok)
		r.clean(t, hostileRSS)
		if r.code != exitUsage || !strings.Contains(r.stdout, "verdict: holds") || !strings.Contains(r.stderr, "--html") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		r = runVerify(t, wd, "check", "--json", "--chrome", filepath.Join(dir, "no", "such", "dir.json"), in)
		r.clean(t, hostileRSS)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--chrome") {
			t.Errorf("--chrome into a missing directory: exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("stdout on a full disk", func(t *testing.T) {
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Skip("no /dev/full")
		}
		defer full.Close()
		r := startVerify(t, wd, nil, full, "check", ok)
		r.wait(t)
		r.clean(t, hostileRSS)
		if r.code != exitUsage || !strings.Contains(r.stderr, "writing standard output") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("model --out with planted links", func(t *testing.T) {
		out := filepath.Join(dir, "out")
		os.Mkdir(out, 0o755)
		victim := filepath.Join(dir, "victim2")
		os.WriteFile(victim, []byte("keep"), 0o644)
		for _, n := range []string{"lost-wakeup-no-lost-wakeup.jsonl", "lost-wakeup-no-lost-wakeup.html"} {
			os.Symlink(victim, filepath.Join(out, n))
		}
		r := runVerify(t, wd, "model", "-q", "--variant", "lost-wakeup", "--out", out)
		r.clean(t, hostileRSSBig)
		if r.code != exitViolated {
			t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if b, _ := os.ReadFile(victim); string(b) != "keep" {
			t.Error("a link's target was overwritten")
		}
	})
	t.Run("suggested commands are shell-quoted", func(t *testing.T) {
		evil := filepath.Join(dir, "a b;$(touch pwned).jsonl")
		os.WriteFile(evil, src, 0o644)
		r := runVerify(t, dir, "check", evil)
		r.clean(t, hostileRSS)
		m := regexp.MustCompile(`step through it: verify replay (.*)`).FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("no suggested command:\n%s", r.stdout)
		}
		// Paste the argument into a shell: it must be the path, one word,
		// and run nothing.
		out, err := exec.Command("sh", "-c", "printf '%s|' "+m[1]).CombinedOutput()
		if err != nil || string(out) != evil+"|" {
			t.Errorf("the shell reads %q as %q (%v)", m[1], out, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Error("pasting the suggested command ran the substitution")
		}
		if m[1] != traces.ShellQuote(evil) {
			t.Errorf("got %s, want traces.ShellQuote's %s", m[1], traces.ShellQuote(evil))
		}
	})
}

// TestHostileLarge: inputs sized to hurt, made at test time.
func TestHostileLarge(t *testing.T) {
	wd, _ := os.Getwd()
	dir := t.TempDir()
	write := func(name string, fill func(w io.Writer)) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		fill(f)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const hdr = `{"format":"execspec-trace","version":1,"executor":"x","workers":2,"policy":"fifo"}` + "\n"
	// 200,000 tasks queued, then a take out of FIFO order: the state
	// before the violation lists them all; every printed line is bounded.
	queued := write("queued.jsonl", func(w io.Writer) {
		io.WriteString(w, hdr)
		for i := 1; i <= 200_000; i++ {
			fmt.Fprintf(w, `{"seq":%d,"kind":"spawn","task":%d,"queue":"global"}`+"\n", i, i)
		}
		io.WriteString(w, `{"seq":200001,"kind":"take","task":2,"worker":0,"source":"global"}`+"\n")
	})
	long := write("long_line.jsonl", func(w io.Writer) {
		io.WriteString(w, hdr)
		io.WriteString(w, `{"seq":1,"kind":"spawn","task":1,"queue":"global","detail":"`+strings.Repeat("A", 3<<20)+`"}`+"\n")
	})
	blank := write("blank.jsonl", func(w io.Writer) {
		io.WriteString(w, hdr)
		w.Write(bytes.Repeat([]byte("\n"), 8<<20))
	})
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", queued}, exitViolated, "GLOBAL-STEAL"},
		{[]string{"check", "--last", "10000", queued}, exitViolated, "GLOBAL-STEAL"},
		{[]string{"check", "--chrome", filepath.Join(dir, "q.json"), queued}, exitViolated, "GLOBAL-STEAL"},
		{[]string{"replay", "--from", "200001", queued}, exitViolated, ""},
		{[]string{"check", long}, exitUsage, "line longer than"},
		{[]string{"check", blank}, exitHolds, "verdict: holds"},
	} {
		t.Run(filepath.Base(c.args[len(c.args)-1])+"/"+c.args[0]+fmt.Sprint(len(c.args)), func(t *testing.T) {
			r := runVerify(t, wd, c.args...)
			r.clean(t, hostileRSS)
			if r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.want) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", r.code, c.code, c.want, clipForLog(r.stdout), clipForLog(r.stderr))
			}
			if len(r.stdout) > 1<<20 {
				t.Errorf("%d bytes of output", len(r.stdout))
			}
		})
	}
}

// drained waits until the reader of the pipe whose read end is pr has taken
// everything written to it (a loaded machine may start the child late).
func drained(t *testing.T, pr *os.File) {
	t.Helper()
	for start := time.Now(); time.Since(start) < hostileWait; time.Sleep(20 * time.Millisecond) {
		n, err := unix.IoctlGetInt(int(pr.Fd()), unix.TIOCINQ) // FIONREAD
		if err != nil {
			t.Logf("TIOCINQ: %v; waiting a second instead", err)
			time.Sleep(time.Second)
			return
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("the child never read its input")
}

// blockedOnFIFO waits until the verify process of r (the launcher's
// child) is blocked opening a named pipe, which it does only after it
// passes its signals to its context (main installs that first): a signal
// sent earlier, on a loaded machine that starts the child late, kills it
// before its handler is in place, and the test would see that instead of
// the interrupt it means. Where the kernel does not say what a thread
// waits for (/proc/PID/task/TID/wchan), it waits a second instead.
func blockedOnFIFO(t *testing.T, r *hostileRun) {
	t.Helper()
	for start := time.Now(); time.Since(start) < hostileWait; time.Sleep(10 * time.Millisecond) {
		pid := childOf(r.cmd.Process.Pid)
		if pid == 0 {
			continue
		}
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		if err != nil || len(tasks) == 0 {
			continue
		}
		known := false
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			switch w := string(b); {
			case w == "wait_for_partner" || strings.Contains(w, "fifo"):
				return
			case w != "" && w != "0":
				known = true
			}
		}
		if !known {
			t.Log("no wchan in /proc: waiting a second instead")
			time.Sleep(time.Second)
			return
		}
	}
	t.Fatal("verify never blocked opening the named pipe")
}

// childOf returns the process id of a child of process ppid, or 0.
func childOf(ppid int) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		var state byte
		var pid, parent int
		if _, err := fmt.Sscanf(s[:strings.IndexByte(s, ' ')], "%d", &pid); err != nil {
			continue
		}
		if _, err := fmt.Sscanf(s[i+1:], " %c %d", &state, &parent); err == nil && parent == ppid {
			return pid
		}
	}
	return 0
}

// TestHostileSignals: SIGINT and SIGTERM end every long phase — a read
// blocked on a silent pipe, a pipe of endless blank lines, the open of a
// named pipe nobody writes, model checking, a property run — with what was
// found so far and exit 3. The deadline only catches a hang (the latency is
// logged; BENCHMARKS.md has the measurement).
func TestHostileSignals(t *testing.T) {
	wd, _ := os.Getwd()
	conforms, err := os.ReadFile(filepath.Join("testdata", "check", "conforms.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Join(strings.SplitAfter(string(conforms), "\n")[:5], "") // header and 4 events
	const deadline = 5 * time.Second
	// started waits until the launcher passes signals on: a signal before
	// would kill the launcher itself (a loaded machine starts it slowly).
	// A run that has read it already (blockedOnFIFO) does not read again.
	started := func(t *testing.T, r *hostileRun) {
		t.Helper()
		if r.started {
			return
		}
		if line, err := r.reportR.ReadString('\n'); line != "started\n" {
			t.Fatalf("the launcher did not start: %q %v", line, err)
		}
		r.started = true
	}
	signalRun := func(t *testing.T, r *hostileRun, sig syscall.Signal, after time.Duration, rss int64) {
		t.Helper()
		started(t, r)
		time.Sleep(after)
		sent := time.Now()
		if err := r.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		r.wait(t)
		took := time.Since(sent)
		t.Logf("exit %d %v after %v", r.code, sig, took)
		if took > deadline {
			t.Errorf("took %v after %v", took, sig)
		}
		r.clean(t, rss)
		if r.code != exitUnknown {
			t.Errorf("exit %d after %v, want %d\nstdout:\n%s\nstderr:\n%s", r.code, sig, exitUnknown, r.stdout, r.stderr)
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("silent pipe/"+sig.String(), func(t *testing.T) {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			defer pw.Close()
			r := startVerify(t, wd, pr, nil, "check", "-")
			io.WriteString(pw, head) // then nothing, and the pipe stays open
			drained(t, pr)
			signalRun(t, r, sig, 200*time.Millisecond, hostileRSS)
			if !strings.Contains(r.stdout, "interrupted after 4 events") || !strings.Contains(r.stdout, "verdict: unknown") {
				t.Errorf("no partial result:\n%s", r.stdout)
			}
		})
	}
	t.Run("endless blank lines", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		r := startVerify(t, wd, pr, nil, "check", "-")
		reading := make(chan struct{}) // closed once the child has read 1 MiB: it is past its start
		go func() {
			defer pw.Close()
			io.WriteString(pw, head)
			blank := bytes.Repeat([]byte("\n"), 64<<10)
			for n := 0; ; n++ {
				if n == 16+1 { // more than the pipe holds
					close(reading)
				}
				if _, err := pw.Write(blank); err != nil {
					return
				}
			}
		}()
		select {
		case <-reading:
		case <-time.After(hostileWait):
			t.Fatal("the child never read its input")
		}
		signalRun(t, r, syscall.SIGINT, 100*time.Millisecond, hostileRSS)
		pr.Close()
	})
	// An interrupt that cuts the input in the middle of a line is an
	// interrupt (exit 3), not a truncated trace (exit 2).
	for _, sub := range [][]string{{"check"}, {"replay", "--print"}} {
		t.Run("half a line/"+sub[0], func(t *testing.T) {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			defer pw.Close()
			r := startVerify(t, wd, pr, nil, append(sub, "-")...)
			io.WriteString(pw, head+`{"seq":5,"kind":"po`) // and the rest never comes
			drained(t, pr)
			signalRun(t, r, syscall.SIGINT, 200*time.Millisecond, hostileRSS)
			if strings.Contains(r.stdout+r.stderr, "truncated") {
				t.Errorf("an interrupt reported as a truncated trace:\n%s\n%s", r.stdout, r.stderr)
			}
		})
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("merge of a named pipe/"+sig.String(), func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "result.json")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip(err)
			}
			r := startVerify(t, wd, nil, nil, "merge", fifo)
			started(t, r)
			blockedOnFIFO(t, r)
			signalRun(t, r, sig, 300*time.Millisecond, hostileRSS)
		})
	}
	// replay said "bad input" (exit 2) here: an interrupt is exit 3.
	for _, cmd := range []string{"check", "replay"} {
		t.Run("named pipe nobody opens/"+cmd, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip(err)
			}
			r := startVerify(t, wd, nil, nil, cmd, fifo)
			started(t, r)
			blockedOnFIFO(t, r)
			signalRun(t, r, syscall.SIGTERM, 300*time.Millisecond, hostileRSS)
			if strings.Contains(r.stderr, "bad input") {
				t.Errorf("an interrupt reported as bad input:\n%s", r.stderr)
			}
		})
	}
	t.Run("model/SIGTERM", func(t *testing.T) {
		r := startVerify(t, wd, nil, nil, "model", "-q", "--workers", "3", "--tasks", "6", "--pendings", "2", "--parallel", "1", "--max-memory", "150")
		signalRun(t, r, syscall.SIGTERM, time.Second, hostileRSSBig+(150<<20))
		if !strings.Contains(r.stdout, "UNKNOWN") {
			t.Errorf("no partial result:\n%s", r.stdout)
		}
	})
	t.Run("run/SIGTERM", func(t *testing.T) {
		r := startVerify(t, wd, nil, nil, "run", "--executor", "worksteal", "--checks", "10000000", "--property", "exactly-once")
		signalRun(t, r, syscall.SIGTERM, time.Second, hostileRSSBig)
		if !strings.Contains(r.stdout, "interrupted") {
			t.Errorf("no partial result:\n%s", r.stdout)
		}
	})
}

// allPropertyNames is every property of the suite, comma-separated.
func allPropertyNames() string {
	var names []string
	for _, p := range properties.Properties() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

// TestClosedOutput: a reader that goes away (verify ... | head -1) makes
// verify stop as on Ctrl-C, with exit 2 (an output that could not be
// written), instead of dying of SIGPIPE at its next write. verify test
// writes its progress to stderr while go test runs in a process group of
// its own: dead of SIGPIPE, it left go test and the test binary running
// for as long as --time or --timeout let them (seen: both alive after
// verify test --time 30s 2>&1 | head -3 had ended).
func TestClosedOutput(t *testing.T) {
	bin := verifyBinary(t)
	ok := filepath.Join("testdata", "check", "conforms.jsonl")
	abs, err := filepath.Abs(ok)
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir() // a module with a test that --time would run for a minute
	for name, body := range map[string]string{"go.mod": "module m\n\ngo 1.26\n", "m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n"} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		args   []string
		stderr bool // the closed pipe is stderr (else stdout)
	}{
		{"replay stdout", []string{"replay", abs}, false},
		{"model stdout", []string{"model", "--workers", "2", "--tasks", "2"}, false},
		{"test stderr", []string{"test", ".", "--time", "1m"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close() // the reader is gone before the first write
			defer w.Close()
			cmd := exec.Command(bin, c.args...)
			cmd.Dir = mod
			cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
			var other strings.Builder
			if c.stderr {
				cmd.Stdout, cmd.Stderr = &other, w
			} else {
				cmd.Stdout, cmd.Stderr = w, &other
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(hostileWait):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running %v after its output was closed", hostileWait)
			}
			st := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if st.Signaled() || st.ExitStatus() != exitUsage {
				t.Fatalf("%v (signal %v), want exit %d\n%s", cmd.ProcessState, st.Signal(), exitUsage, other.String())
			}
			if !c.stderr && !strings.Contains(other.String(), "writing standard output") {
				t.Errorf("stderr does not say that standard output could not be written:\n%s", other.String())
			}
		})
	}
}

// TestOutputDirectoryMissing: an output file whose directory does not
// exist, or is a file, is refused with exit 2 and a message that names
// the path asked for and what is wrong with its directory. Before, the
// message named a temporary file the user never asked for
// ("open /x/.out.html.3485044795.tmp: no such file or directory") or
// lstat's own words.
func TestOutputDirectoryMissing(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join("testdata", "check", "conforms.jsonl")
	for _, c := range []struct {
		flag, parent, want string
	}{
		{"--html", filepath.Join(dir, "missing"), "does not exist"},
		{"--chrome", filepath.Join(dir, "missing"), "does not exist"},
		{"--html", regular, "is not a directory"},
	} {
		out := filepath.Join(c.parent, "out.html")
		code, _, stderr := run(t, "check", c.flag, out, ok)
		if code != exitUsage {
			t.Errorf("check %s %s: exit %d, want %d\n%s", c.flag, out, code, exitUsage, stderr)
		}
		wantAll(t, "stderr", stderr, "output file "+out+": its directory "+c.parent+" "+c.want)
		if strings.Contains(stderr, ".tmp") {
			t.Errorf("the message names a temporary file:\n%s", stderr)
		}
	}
}
