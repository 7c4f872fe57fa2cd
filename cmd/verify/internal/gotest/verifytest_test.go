package gotest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/cmd/verify/internal/clitest"
	"github.com/execspec/execspec/instrument/harness"
	"github.com/execspec/execspec/internal/testenv"
)

// TestMain keeps the files written where no flag says out of the
// user's cache directory.
func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

// verify runs verify test as the command does.
var verify = clitest.Commands(Test)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return verify.Run(t, args...)
}

var wantAll = clitest.WantAll

// demoModule writes a module of its own with files, changes into it and
// returns its directory.
func demoModule(t *testing.T, files map[string]string) string {
	t.Helper()
	testenv.Slow(t, "builds instrumented tests (seconds each)")
	dir := t.TempDir()
	files["go.mod"] = "module demo\n\ngo 1.26\n"
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // where builds are kept
	return dir
}

func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		names = append(names, p)
		return err
	})
	slices.Sort(names)
	return names
}

const abba = `package demo

import "sync"

// Transfer locks from, then to: two transfers in opposite directions
// deadlock.
func Transfer(from, to *sync.Mutex, done func()) {
	from.Lock()
	to.Lock()
	to.Unlock()
	from.Unlock()
	done()
}
`

const abbaTest = `package demo

import (
	"sync"
	"testing"
)

func TestABBA(t *testing.T) {
	var a, b sync.Mutex
	var wg sync.WaitGroup
	wg.Add(2)
	go Transfer(&a, &b, wg.Done)
	go Transfer(&b, &a, wg.Done)
	wg.Wait()
}

func TestOneWay(t *testing.T) {
	var a, b sync.Mutex
	ch := make(chan int)
	go Transfer(&a, &b, func() { ch <- 1 })
	<-ch
}
`

// TestVerifyTestFindsAndReplays: an AB-BA deadlock in a user's package is
// found under control, reported with its blocked goroutines, and replayed
// from the saved schedule with the same checksum; the user's tree is left
// as it was.
func TestVerifyTestFindsAndReplays(t *testing.T) {
	dir := demoModule(t, map[string]string{"demo.go": abba, "demo_test.go": abbaTest})
	before := listTree(t, dir)
	out := t.TempDir()
	code, stdout, stderr := run(t, "test", ".", "--runs", "300", "--out", out, "--json", "-q")
	if code != cli.ExitViolated {
		t.Fatalf("exit %d, want %d\n%s", code, cli.ExitViolated, stderr)
	}
	var rep testReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	var abbaOut, oneWay *struct{ kind, sched string }
	for _, o := range rep.Tests {
		v := &struct{ kind, sched string }{o.Kind, o.Schedule}
		switch o.Test {
		case "TestABBA":
			abbaOut = v
		case "TestOneWay":
			oneWay = v
		}
	}
	if abbaOut == nil || abbaOut.kind != "deadlock" || abbaOut.sched == "" {
		t.Fatalf("TestABBA: %+v\n%s", rep.Tests, stderr)
	}
	if oneWay == nil || oneWay.kind != "" {
		t.Fatalf("TestOneWay should pass every run: %+v", rep.Tests)
	}
	for _, want := range []string{"Mutex.Lock at " + filepath.Join(dir, "demo.go") + ":9", "WaitGroup.Wait at " + filepath.Join(dir, "demo_test.go") + ":14", "--replay " + abbaOut.sched} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the report lacks %q:\n%s", want, stderr)
		}
	}
	code, _, stderr = run(t, "test", ".", "--replay", abbaOut.sched, "--run", "^TestABBA$", "-q")
	if code != cli.ExitViolated || !strings.Contains(stderr, "reproduced its checksum") {
		t.Fatalf("replay: exit %d\n%s", code, stderr)
	}
	// The replay reused the search's build (same sources, same key).
	if builds, err := os.ReadDir(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "execspec", "builds")); err != nil || len(builds) != 1 {
		t.Errorf("kept builds: %v, %v; want the one build reused", builds, err)
	}
	if after := listTree(t, dir); !slices.Equal(before, after) {
		t.Errorf("the module's tree changed:\nbefore %v\nafter  %v", before, after)
	}
}

// TestVerifyTestReportsTheTestsLog: a run that fails by the test's own
// check is reported with the test's line, once; the harness's lines
// (which run failed, the early-timers note) are said by verify test, not
// again as the test's log.
func TestVerifyTestReportsTheTestsLog(t *testing.T) {
	demoModule(t, map[string]string{"lost_test.go": `package demo

import (
	"runtime"
	"sync"
	"testing"
)

func TestLost(t *testing.T) {
	n := 0
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := n
			runtime.Gosched()
			n = v + 1
		}()
	}
	wg.Wait()
	if n != 2 {
		t.Errorf("n = %d, want 2", n)
	}
}
`})
	code, _, stderr := run(t, "test", ".", "--runs", "200", "--out", t.TempDir(), "-q")
	if code != cli.ExitViolated {
		t.Fatalf("exit %d, want %d\n%s", code, cli.ExitViolated, stderr)
	}
	if want := "lost_test.go:23: n = 1, want 2"; strings.Count(stderr, want) != 1 {
		t.Errorf("want %q once in the report:\n%s", want, stderr)
	}
	if strings.Contains(stderr, ": run ") {
		t.Errorf("the harness's lines are in the test's log:\n%s", stderr)
	}
}

// TestVerifyTestBadInput: each bad input is a clear message and exit 2 or
// 3, never a hang.
func TestVerifyTestBadInput(t *testing.T) {
	demoModule(t, map[string]string{
		"broken/broken.go":        "package broken\n\nfunc F() int { return \"not an int\" }\n",
		"broken/broken_test.go":   "package broken\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { F() }\n",
		"exits/exits_test.go":     "package exits\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestExit(t *testing.T) { os.Exit(0) }\n",
		"spins/spins_test.go":     "package spins\n\nimport \"testing\"\n\nfunc TestSpin(t *testing.T) {\n\tn := 0\n\tfor n >= 0 {\n\t\tn = (n + 1) % 10\n\t}\n}\n",
		"notests/notests.go":      "package notests\n",
		"flags/flags_test.go":     "package flags\n",
		"passes/passes_test.go":   "package passes\n\nimport \"testing\"\n\nfunc TestPass(t *testing.T) {}\n",
		"passes/other/other.go":   "package other\n",
		"passes/other/other2.go":  "package other\n\nfunc G() {}\n",
		"passes/nomatch/empty.go": "package nomatch\n",
	})
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"test", "./nope"}, cli.ExitUsage, "nope"},
		{[]string{"test", "./broken"}, cli.ExitUsage, "does not build"},
		{[]string{"test", "./notests"}, cli.ExitUsage, "has no test files"},
		{[]string{"test", "./passes", "--instrument", "example.com/nowhere"}, cli.ExitUsage, "example.com/nowhere"},
		{[]string{"test", "./passes", "--strategy", "nope"}, cli.ExitUsage, "--strategy"},
		{[]string{"test", "./passes", "--runs", "0"}, cli.ExitUsage, "--runs"},
		{[]string{"test", "./exits", "--runs", "2"}, cli.ExitUsage, "TestExit calls os.Exit"},
		{[]string{"test", "./spins", "--timeout", "3s"}, cli.ExitUnknown, "did not end within --timeout 3s"},
		{[]string{"test", "./passes", "--time", "10ms"}, cli.ExitUsage, "--time"},
		{[]string{"test", "./passes", "--time", "1m", "--replay", "passes/passes_test.go"}, cli.ExitUsage, "--time does not apply: a replay makes one run"},
		// --time does not end a run under way: --timeout still kills it.
		{[]string{"test", "./spins", "--time", "1s", "--timeout", "3s"}, cli.ExitUnknown, "did not end within --timeout 3s"},
	}
	for _, c := range cases {
		if raceEnabled && c.code != cli.ExitUsage || raceEnabled && strings.Contains(c.want, "os.Exit") {
			// These build and run a test binary each (seconds under the
			// race detector, which they do not need: the command's own
			// logic is what they check). EXECSPEC_LONG runs them anyway.
			if os.Getenv("EXECSPEC_LONG") == "" {
				continue
			}
		}
		code, _, stderr := run(t, append(c.args, "-q")...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("verify %s: exit %d, want %d with %q:\n%s", strings.Join(c.args, " "), code, c.code, c.want, stderr)
		}
	}
}

// TestVerifyTestOldGo: a go command whose version has no overlay support,
// synctest or known channel layout is refused with its version named.
func TestVerifyTestOldGo(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\necho go1.24.9\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	code, _, stderr := run(t, "test", ".")
	if code != cli.ExitUsage || !strings.Contains(stderr, "go1.24.9 is not supported") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
}

// TestReplayCommandKeepsEarlyTimers: a run made with --early-timers=false
// or --std-sync is replayed so (otherwise the replay would diverge); early
// timers are the default, which the command need not say.
func TestReplayCommandKeepsEarlyTimers(t *testing.T) {
	got := replayCommand([]string{"./pool"}, testFlags{instrument: []string{"example.com/m"}, early: false, stdSync: true}, "s.schedule")
	if want := "verify test ./pool --instrument example.com/m --early-timers=false --std-sync --replay s.schedule"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	got = replayCommand([]string{"./pool"}, testFlags{early: true}, "s.schedule")
	if want := "verify test ./pool --replay s.schedule"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

// TestUnfinishedTests: the tests a run stopped in are those that started
// and neither reported an outcome nor ended in go test's output.
func TestUnfinishedTests(t *testing.T) {
	out := "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n=== RUN   TestB/sub\n=== RUN   TestC\n=== RUN   TestD\n--- SKIP: TestD (0.00s)\n=== RUN   TestE\npanic: test timed out after 3s\n"
	started := []string{"TestA", "TestB", "TestC", "TestD", "TestE"}
	got := unfinished(started, []harness.Outcome{{Test: "TestC"}}, out)
	if want := []string{"TestB", "TestE"}; !slices.Equal(got, want) {
		t.Fatalf("unfinished %v, want %v", got, want)
	}
}
