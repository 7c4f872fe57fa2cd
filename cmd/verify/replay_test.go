package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/execspec/execspec/traces"
)

// Piped, replay prints each event with only what it changed: a long
// trace's output grows with its events, not with its events times its
// tasks.
func TestReplayPipedPrintsChanges(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "many.jsonl")
	h := traces.Header{Format: traces.Format, Version: traces.Version, Executor: "fifo", Workers: 1, Policy: "fifo"}
	var events []traces.Event
	const tasks = 2000
	seq := uint64(0)
	ev := func(e traces.Event) {
		seq++
		e.Seq = seq
		events = append(events, e)
	}
	for k := int64(1); k <= tasks; k++ {
		ev(traces.Event{Kind: traces.KindSpawn, Task: k, Worker: -1, Victim: -1, Queue: traces.QueueGlobal})
	}
	for k := int64(1); k <= tasks; k++ {
		ev(traces.Event{Kind: traces.KindTake, Task: k, Worker: 0, Victim: -1, Source: traces.SourceGlobal})
		ev(traces.Event{Kind: traces.KindPollEnd, Task: k, Worker: 0, Victim: -1, Result: traces.ResultReady})
	}
	if err := traces.WriteFile(file, h, events); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "replay", file)
	if code != exitHolds {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Each event: its line and at most the lines of the state it changed,
	// each bounded.
	if perEvent := len(out) / len(events); perEvent > 400 {
		t.Errorf("%d bytes for %d events (%d per event): the output does not stay bounded", len(out), len(events), perEvent)
	}
	if !regexp.MustCompile(`(?m)^\s+\| t7:DONE$`).MatchString(out) {
		t.Error("the completion of t7 does not print the one task it changed")
	}
}

// ptyReplay runs verify replay on the README's lost-wakeup trace in a
// pseudo-terminal, and returns the command, the terminal's two ends and
// what the terminal has shown so far; it waits for the first screen.
func ptyReplay(t *testing.T) (cmd *exec.Cmd, master, slave *os.File, shown func() string) {
	t.Helper()
	cmd, master, slave, shown = ptyStart(t)
	waitShown(t, cmd, shown, "before event 1")
	return cmd, master, slave, shown
}

// ptyStart starts verify replay of examples/traces/lost_wakeup.jsonl on a
// pseudo-terminal, with env added to its environment, and returns what
// the terminal has shown so far.
func ptyStart(t *testing.T, env ...string) (cmd *exec.Cmd, master, slave *os.File, shown func() string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("pseudo-terminals are opened the Linux way here")
	}
	bin := verifyBinary(t)
	master, slave, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	trace, _ := filepath.Abs(filepath.Join("..", "..", "examples", "traces", "lost_wakeup.jsonl"))
	cmd = exec.Command(bin, "replay", trace)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		screen bytes.Buffer
	)
	shown = func() string {
		mu.Lock()
		defer mu.Unlock()
		return screen.String()
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return cmd, master, slave, shown
}

// waitShown waits until the terminal has shown s, so that the next key
// reaches the terminal after the screen before it (and raw mode) is up.
func waitShown(t *testing.T, cmd *exec.Cmd, shown func() string, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(shown(), s) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the terminal never showed %q:\n%s", s, shown())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// In a real terminal (a pseudo-terminal), verify replay steps through the
// trace with the arrow keys and quits on q.
func TestReplayInTerminal(t *testing.T) {
	cmd, master, _, shown := ptyReplay(t)
	for _, k := range []struct{ key, want string }{
		{"\x1b[C", "event 1 of 4"}, {"\x1b[C", "event 2 of 4"}, {"\x1b[D", "screen-3"}, {"\x1b[F", "VIOLATION of WAKE"},
	} {
		master.Write([]byte(k.key))
		if k.want == "screen-3" {
			// Back at event 1: its screen shows a second time.
			deadline := time.Now().Add(20 * time.Second)
			for strings.Count(shown(), "event 1 of 4") < 2 {
				if time.Now().After(deadline) {
					t.Fatalf("← did not go back to event 1:\n%s", shown())
				}
				time.Sleep(20 * time.Millisecond)
			}
			continue
		}
		waitShown(t, cmd, shown, k.want)
	}
	master.Write([]byte("q"))
	done := make(chan error)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := cmd.ProcessState.ExitCode(); code != exitViolated {
			t.Errorf("exit %d (%v), want 1 (the trace has a violation)", code, err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("q did not quit")
	}
}

// SIGTERM during stepping restores the terminal and exits 3.
func TestReplayInTerminalSIGTERM(t *testing.T) {
	cmd, _, slave, _ := ptyReplay(t)
	if !rawMode(t, slave) {
		t.Fatal("the terminal is not in raw mode while stepping")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("SIGTERM did not end the replay")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitUnknown {
		t.Errorf("exit %d after SIGTERM, want 3", code)
	}
	if rawMode(t, slave) {
		t.Error("the terminal was left in raw mode")
	}
}

// On a terminal that says it cannot move the cursor (TERM=dumb), replay
// prints instead of stepping, and no escape sequence reaches it.
func TestReplayDumbTerminal(t *testing.T) {
	cmd, _, _, shown := ptyStart(t, "TERM=dumb")
	werr := make(chan error, 1)
	go func() { werr <- cmd.Wait() }()
	select {
	case <-werr:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("replay on a dumb terminal did not end (stepping, waiting for keys?)")
	}
	waitShown(t, cmd, shown, "VIOLATION of WAKE") // the output has reached the reader
	if code := cmd.ProcessState.ExitCode(); code != exitViolated {
		t.Errorf("exit %d, want 1", code)
	}
	if out := shown(); strings.Contains(out, "\x1b[") || !strings.Contains(out, "VIOLATION of WAKE") {
		t.Errorf("output on a dumb terminal:\n%q", out)
	}
}
