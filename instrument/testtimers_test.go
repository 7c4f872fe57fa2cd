package instrument

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/instrument/harness"
	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/internal/testenv"
)

// TestTestTimers builds testdata/testtimers (a library, instrumented, and
// tests that guard it with timers of their own) and runs its tests under
// control with early timers, as verify test does by default: the
// timeouts of the tests (time.After, time.NewTimer, time.Sleep in the
// _test.go file) never fire while the slow but correct library could
// still run (500 runs each, no failure), while the library's own timeout
// may, so the leak that needs it is found, with the line that says the
// run let time pass early, and replays exactly. Without early timers the
// leak is never found.
func TestTestTimers(t *testing.T) {
	testenv.Slow(t, "builds a module (about 10 s)")
	dir := testdataModule(t, "testtimers", "testtimers_test.go", "lib/lib.go")
	b, err := Instrument(Config{Dir: dir, Tests: []string{"."}, Instrument: []string{"testtimers/lib"}, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if b.Counts[RuleTestTimer] != 3 {
		t.Fatalf("testtimer rule applied %d times, want 3 (After, NewTimer, Sleep)", b.Counts[RuleTestTimer])
	}
	bin := filepath.Join(t.TempDir(), "testtimers.test")
	if err := b.CompileTest(dir, bin); err != nil {
		t.Fatal(err)
	}
	run := func(early, runs, schedule string) map[string]harness.Outcome {
		t.Helper()
		report := filepath.Join(t.TempDir(), "report.jsonl")
		cmd := exec.Command(bin, "-test.run", "^Test(Sum|SumSleep|Fetch)$")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), rt.EnvEarlyTimers+"="+early, harness.EnvRuns+"="+runs, harness.EnvReport+"="+report,
			harness.EnvOut+"="+t.TempDir(), harness.EnvSchedule+"="+schedule)
		out, _ := cmd.CombinedOutput()
		outs, err := harness.ReadReport(report)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		m := map[string]harness.Outcome{}
		for _, o := range outs {
			m[o.Test] = o
		}
		return m
	}
	got := run("1", "500", "")
	for _, name := range []string{"TestSum", "TestSumSleep"} {
		if o := got[name]; o.Runs != 500 || o.FailedRun != 0 {
			t.Errorf("%s with early timers: %+v; want 500 runs, none failed", name, o)
		}
	}
	fetch := got["TestFetch"]
	if fetch.Kind != "leak" || !strings.Contains(fetch.Early, "--early-timers=false") || fetch.Schedule == "" {
		t.Fatalf("TestFetch with early timers: %+v; want the leak, with the early-timers line", fetch)
	}
	data, err := os.ReadFile(fetch.Schedule)
	if err != nil || !strings.Contains(string(data), "# rt.early-timers: 2\n") {
		t.Fatalf("the schedule of TestFetch: %v\n%s", err, data)
	}
	// The replay takes the mode from the file.
	if o := run("0", "", fetch.Schedule)["TestFetch"]; o.Kind != "leak" || !o.Replayed {
		t.Errorf("the replay of TestFetch's schedule: %+v", o)
	}
	if o := run("0", "500", "")["TestFetch"]; o.Runs != 500 || o.FailedRun != 0 {
		t.Errorf("TestFetch without early timers: %+v; want 500 runs, none failed", o)
	}
}

// testdataModule writes a module named name whose files are those of
// testdata/name, and lets the go command complete its go.sum.
func testdataModule(t *testing.T, name string, files ...string) string {
	t.Helper()
	dir := testModule(t, name)
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join("testdata", name, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), src)
	}
	t.Setenv("GOFLAGS", "-mod=mod") // the module written here has no complete go.sum
	return dir
}
