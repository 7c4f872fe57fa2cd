package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets a test run this test binary as the verify command, as a
// separate process (EXECSPEC_VERIFY_MAIN=1).
// A swarm of N separate processes, each writing its result file, merges
// into one verdict: unknown with a combined coverage estimate on the
// correct model, violated (with a counterexample trace that verify replay
// accepts up to the broken step) on a broken variant.
func TestSwarmProcessesMerge(t *testing.T) {
	const n = 4
	for _, tc := range []struct {
		variant string
		code    int
		want    string
	}{
		{"", exitUnknown, "no violation found; together the searches visited about"},
		{"duplicate-enqueue", exitViolated, "VIOLATED  swarm of 4 (4 results): single-queue"},
	} {
		dir := t.TempDir()
		var procs []*exec.Cmd
		var files []string
		for i := 1; i <= n; i++ {
			file := filepath.Join(dir, "r"+string(rune('0'+i))+".json")
			files = append(files, file)
			args := []string{"model", "-q", "--workers", "2", "--tasks", "3", "--pendings", "2", "--bitstate", "1",
				"--swarm", string(rune('0'+i)) + "/4", "--result", file, "--out", filepath.Join(dir, "cx")}
			if tc.variant != "" {
				args = append(args, "--variant", tc.variant)
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "EXECSPEC_VERIFY_MAIN=1")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			procs = append(procs, cmd)
		}
		for _, p := range procs {
			err := p.Wait()
			if code := p.ProcessState.ExitCode(); code != tc.code {
				t.Fatalf("%s: a member exited %d (%v), want %d", tc.variant, code, err, tc.code)
			}
		}
		code, out, errs := run(t, append([]string{"merge"}, files...)...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: merge exited %d:\n%s%s\nwant exit %d and %q", tc.variant, code, out, errs, tc.code, tc.want)
		}
		if tc.code == exitUnknown && !strings.Contains(out, "coverage estimate") {
			t.Errorf("no combined coverage estimate:\n%s", out)
		}
		// A member missing is reported; a member twice is refused.
		if code, out, _ := run(t, "merge", files[0], files[2]); code != tc.code || !strings.Contains(out, "missing members: 2, 4") {
			t.Errorf("two of four: exit %d:\n%s", code, out)
		}
		if code, _, errs := run(t, "merge", files[0], files[0]); code != exitUsage || !strings.Contains(errs, "given twice") {
			t.Errorf("a member twice: exit %d: %s", code, errs)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"format":"something-else"}`), 0o644)
	for _, args := range [][]string{{"merge"}, {"merge", bad}, {"merge", "/nonexistent/x.json"},
		{"model", "--swarm", "5/4"}, {"model", "--swarm", "x"}, {"model", "--bitstate", "1", "--property", "eventually-done"},
		{"model", "--bitstate", "1", "--compact"}, {"model", "--result", "x.json"}} {
		if code, _, _ := run(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
