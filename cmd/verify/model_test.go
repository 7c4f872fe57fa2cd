package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/cmd/verify/internal/clitest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/")

// What every subcommand's --json prints first (package cli).
var (
	jsonSchema = cli.JSONSchema
	verdictOf  = cli.VerdictOf
)

// run runs verify with args: its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Dispatch(dispatch).Run(t, args...)
}

// wantAll fails t for each of wants that text, the output named name,
// does not contain.
var wantAll = clitest.WantAll

// runJSON runs verify with args, wants exit code want and one JSON object
// on stdout, and returns it decoded, and stdout for messages.
func runJSON[T any](t *testing.T, want int, args ...string) (T, string) {
	t.Helper()
	return clitest.RunJSON[T](t, dispatch, want, args...)
}

func TestModelExitCodes(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"model", "-q"}, exitHolds},
		{[]string{"model", "-q", "--variant", "duplicate-enqueue", "--out", dir}, exitViolated},
		{[]string{"model", "-q", "--workers", "3", "--tasks", "4", "--max-states", "1000"}, exitUnknown},
		{[]string{"model", "--workers", "0"}, exitUsage},
		{[]string{"model", "--variant", "nope"}, exitUsage},
		{[]string{"model", "--property", "nope"}, exitUsage},
		{[]string{"model", "--policy", "fifo", "--variant", "steal-owner-end"}, exitUsage},
		{[]string{"model", "stray"}, exitUsage},
		{[]string{"model", "--list"}, exitHolds},
		{[]string{"nope"}, exitUsage},
	}
	for _, tc := range cases {
		code, _, stderr := run(t, tc.args...)
		if code != tc.code {
			t.Errorf("verify %s: exit %d, want %d (stderr %q)", strings.Join(tc.args, " "), code, tc.code, stderr)
		}
	}
}

func TestModelInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := dispatch(ctx, []string{"model", "-q", "--workers", "3", "--tasks", "4"}, &out, &errb)
	if code != exitUnknown || !strings.Contains(out.String(), "UNKNOWN") || !strings.Contains(out.String(), "interrupted") {
		t.Fatalf("exit %d, output %q; want exit 3 and an UNKNOWN report", code, out.String())
	}
}

func TestModelJSON(t *testing.T) {
	code, out, _ := run(t, "model", "--json", "--variant", "enqueue-while-running", "--out", t.TempDir(), "--parallel", "1")
	if code != exitViolated {
		t.Fatalf("exit %d", code)
	}
	var all struct {
		Schema  int
		Verdict string
		Results []struct {
			Verdict, Property, Trace string
			States                   int64
			Path                     []struct{ Rule, Step string }
		}
	}
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if all.Schema != jsonSchema || all.Verdict != "violated" || len(all.Results) != 1 {
		t.Fatalf("unexpected output %+v", all)
	}
	r := all.Results[0]
	if r.Verdict != "violated" || r.Property != "single-queue" || len(r.Path) != 4 || r.Path[3].Rule != "WAKE" || r.States == 0 {
		t.Fatalf("unexpected result %+v", r)
	}
	// Every property checked is one object too, not one line each.
	code, out, _ = run(t, "model", "--json", "--workers", "2", "--tasks", "2", "--property", "all", "--parallel", "1")
	if err := json.Unmarshal([]byte(out), &all); err != nil || code != exitHolds || all.Verdict != "holds" || len(all.Results) < 2 || strings.Count(out, "\n") != 1 {
		t.Fatalf("--property all: exit %d, %v: %q", code, err, out)
	}
	if _, err := os.Stat(r.Trace); err != nil {
		t.Fatalf("trace not written: %v", err)
	}
}

// The counterexample as the user sees it, against a golden file
// (regenerate with go test ./cmd/verify -run Golden -rewrite).
func TestModelCounterexampleGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"lost_wakeup", []string{"model", "--variant", "lost-wakeup"}},
		{"lost_wakeup_deadlock", []string{"model", "--variant", "lost-wakeup", "--invariants", "none", "--property", "eventually-done"}},
		{"no_aging_fairness", []string{"model", "--policy", "priority", "--variant", "no-aging", "--endless", "--workers", "1", "--tasks", "2", "--property", "fairness"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append(tc.args, "--parallel", "1", "--out", dir)
			_, out, _ := run(t, args...)
			out = strings.ReplaceAll(out, dir, "OUT")
			out = regexp.MustCompile(`(?m)^  \d+ states, .*$`).ReplaceAllString(out, "  STATS")
			golden := filepath.Join("testdata", tc.name+".golden")
			if *rewrite {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if out != string(want) {
				t.Errorf("output differs from %s (run with -rewrite if intended):\n%s", golden, out)
			}
		})
	}
}
