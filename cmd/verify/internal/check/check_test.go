package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/cmd/verify/internal/clitest"
	"github.com/execspec/execspec/internal/chromium"
)

// td is the path of a trace under cmd/verify/testdata/check.
func td(name string) string { return clitest.TestData("check", name) }

// verify runs verify check and verify replay as the command does.
var verify = clitest.Commands(Check, Replay)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return verify.Run(t, args...)
}

var wantAll = clitest.WantAll

// commandCase is a run of verify: its arguments, the exit code it must
// end with, and what its output must say.
type commandCase struct {
	args   []string
	code   int
	stdout []string // each must appear in stdout
	stderr []string // each must appear in stderr
}

// runCases runs each case as a subtest named by its arguments.
func runCases(t *testing.T, cases []commandCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := run(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errs)
			}
			wantAll(t, "stdout", out, c.stdout...)
			wantAll(t, "stderr", errs, c.stderr...)
		})
	}
}

// TestCheckAndReplay runs verify check and verify replay on the trace files
// under testdata/check: exit codes and what the output must say.
func TestCheckAndReplay(t *testing.T) {
	runCases(t, []commandCase{
		{[]string{"check", td("conforms.jsonl")}, cli.ExitHolds,
			[]string{"16 events", "verdict: holds", "fairness"}, nil},
		{[]string{"check", td("conforms.txt")}, cli.ExitHolds, []string{"verdict: holds"}, nil},
		{[]string{"check", td("steal_with_local_work.txt")}, cli.ExitViolated, []string{"VIOLATION at event 10 (line 13)", "WORKER-STEAL"}, nil},
		{[]string{"check", "--linearizability", td("conforms.jsonl")}, cli.ExitHolds, []string{"verdict: holds", "linearizability: holds"}, nil},
		{[]string{"check", td("steal_with_local_work.jsonl")}, cli.ExitViolated,
			[]string{"VIOLATION at event 10 (line 11)", "WORKER-STEAL", "premise:", "state before the event:", "-> ", "#10 w1 take t3 steal from w0", "#8 w1 spawn t4 -> local:1", "verify replay"}, nil},
		{[]string{"check", "--last", "2", td("steal_with_local_work.jsonl")}, cli.ExitViolated, []string{"#9 w1 poll-end t2 ready"}, nil},
		{[]string{"check", td("lost_wakeup.jsonl")}, cli.ExitUnknown, []string{"verdict: unknown", "lost wakeups", "t1"}, nil},
		{[]string{"replay", td("conforms.jsonl")}, cli.ExitHolds,
			[]string{"initial state:", "     1  #1 out spawn t1 -> global", "    16  #16 w0 poll-end t3 ready", "        | ", "end of trace after 16 events", "verdict: holds"}, nil},
		{[]string{"replay", td("steal_with_local_work.jsonl")}, cli.ExitViolated,
			[]string{"    10  #10 w1 take t3 steal from w0", "VIOLATION of WORKER-STEAL"}, nil},
		// Bad input: exit 2, and the message names the file and line.
		{[]string{"check", td("truncated.jsonl")}, cli.ExitUsage, nil, []string{"truncated.jsonl:3: truncated trace"}},
		{[]string{"check", td("unknown_kind.jsonl")}, cli.ExitUsage, nil, []string{`unknown_kind.jsonl:3: unknown event kind "yield"`}},
		{[]string{"check", td("unknown_worker.jsonl")}, cli.ExitUsage, nil, []string{"unknown_worker.jsonl:3: take event on worker 5: the header declares 2 workers"}},
		{[]string{"check", td("task_zero.jsonl")}, cli.ExitUsage, nil, []string{"task_zero.jsonl:2: spawn event without a task"}},
		{[]string{"check", td("version2.jsonl")}, cli.ExitUsage, nil, []string{"version2.jsonl:1: unknown trace version 2"}},
		{[]string{"check", td("no_header.jsonl")}, cli.ExitUsage, nil, []string{"no_header.jsonl:1: missing header"}},
		{[]string{"check", td("bad_json.jsonl")}, cli.ExitUsage, nil, []string{"bad_json.jsonl:2: bad JSON"}},
		{[]string{"check", td("bad_text.txt")}, cli.ExitUsage, nil, []string{`bad_text.txt:3: unknown event kind "tkae"`}},
		{[]string{"replay", td("unknown_kind.jsonl")}, cli.ExitUsage, nil, []string{`unknown_kind.jsonl:3: unknown event kind`}},
		{[]string{"check", td("missing.jsonl")}, cli.ExitUsage, nil, []string{"missing.jsonl"}},
		{[]string{"check", "--go-trace", td("conforms.jsonl")}, cli.ExitUsage, nil, []string{"conforms.jsonl: reading Go trace"}},
		{[]string{"check"}, cli.ExitUsage, nil, []string{"want one trace FILE"}},
		{[]string{"check", "-h"}, cli.ExitHolds, []string{"Usage: verify check", "Exit codes"}, nil}, // help asked for is output
	})
}

func TestCheckJSON(t *testing.T) {
	v, _ := clitest.RunJSON[checkJSON](t, verify, cli.ExitViolated, "check", "--json", td("steal_with_local_work.jsonl"))
	if v.Verdict != "violated" || v.Violation == nil || v.Violation.Rule != "WORKER-STEAL" || v.Violation.Index != 9 || v.Violation.Number != 10 || v.Violation.Line != 11 || len(v.Violation.Before) == 0 {
		t.Errorf("JSON %+v, violation %+v", v, v.Violation)
	}
	v, out := clitest.RunJSON[checkJSON](t, verify, cli.ExitHolds, "check", "--json", td("conforms.jsonl"))
	if v.Verdict != "holds" || v.Events != 16 {
		t.Errorf("%s", out)
	}
	v, out = clitest.RunJSON[checkJSON](t, verify, cli.ExitUsage, "check", "--json", td("truncated.jsonl"))
	if v.Verdict != "bad-input" || !strings.Contains(v.Error, "truncated.jsonl:3") {
		t.Errorf("%s", out)
	}
}

// checkPictures runs verify check --html --chrome on a trace that is
// violated, checks that the output says where both files are, that both
// were written and that the Chrome trace is JSON, and returns the page, its
// text and the output.
func checkPictures(t *testing.T, trace string) (page, html, out string) {
	t.Helper()
	dir := t.TempDir()
	page, chrome := filepath.Join(dir, "v.html"), filepath.Join(dir, "v.json")
	code, out, errs := run(t, "check", "--html", page, "--chrome", chrome, trace)
	if code != cli.ExitViolated {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "timeline: "+page) || !strings.Contains(out, chrome) {
		t.Errorf("output does not say where the files are:\n%s", out)
	}
	var b [2][]byte
	for i, f := range []string{page, chrome} {
		var err error
		if b[i], err = os.ReadFile(f); err != nil || len(b[i]) < 100 {
			t.Errorf("%s: %v, %d bytes", f, err, len(b[i]))
		}
	}
	if !json.Valid(b[1]) {
		t.Errorf("Chrome trace: not valid JSON")
	}
	return page, string(b[0]), out
}

// TestCheckHTML writes the timeline of a violation and, where Chromium is
// installed, opens it and finds the violation in the drawn page.
func TestCheckHTML(t *testing.T) {
	page, _, out := checkPictures(t, td("steal_with_local_work.jsonl"))
	// The message the page must show is the one check printed.
	m := regexp.MustCompile(`(?m)^  what:    (.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no violation message in the output:\n%s", out)
	}
	dom := chromium.Run(t, page, "--dump-dom")
	if !strings.Contains(html.UnescapeString(string(dom)), `<span class="msg">`+m[1]+`</span>`) || !strings.Contains(string(dom), `<tr id="ev-9" class="bad`) {
		t.Errorf("the drawn page does not show the violation %q at event 9", m[1])
	}
}

func TestCheckGoTrace(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("runtime/trace in use: %v", err)
	}
	var wg sync.WaitGroup
	ch := make(chan int)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range ch {
			}
		}()
	}
	for i := range 100 {
		ch <- i
	}
	close(ch)
	wg.Wait()
	trace.Stop()
	file := filepath.Join(t.TempDir(), "go.trace")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "check", "--go-trace", "--stuck-after", "1m", "--html", file+".html", file)
	if code != cli.ExitHolds {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	wantAll(t, "output", out, "lifecycle holds", "fairness: longest wait", "TestCheckGoTrace", "cannot show", "WORKER-STEAL", "timeline: ")
	code, out, _ = run(t, "check", "--go-trace", "--json", file)
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != cli.ExitHolds || v["verdict"] != "holds" {
		t.Errorf("exit %d, %v: %s", code, err, out)
	}
}

// TestDocExample keeps the worked example in docs/trace-format.md true: the
// output shown there is what verify check prints.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "trace-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	const cmdLine = "$ verify check cmd/verify/testdata/check/steal_with_local_work.jsonl\n"
	_, rest, ok := strings.Cut(string(doc), cmdLine)
	if !ok {
		t.Fatalf("docs/trace-format.md lacks %q", cmdLine)
	}
	want, _, _ := strings.Cut(rest, "```")
	trace, err := os.ReadFile(td("steal_with_local_work.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```json\n"+string(trace)+"```") {
		t.Error("the trace shown in docs/trace-format.md is not testdata/check/steal_with_local_work.jsonl")
	}
	_, got, _ := run(t, "check", td("steal_with_local_work.jsonl"))
	got = strings.ReplaceAll(got, td("")+string(filepath.Separator), "cmd/verify/testdata/check/")
	got = strings.ReplaceAll(got, cli.SelfCommand()+" ", "verify ")                 // as an installed verify prints it
	got = strings.ReplaceAll(got, os.TempDir()+string(filepath.Separator), "/tmp/") // wherever TMPDIR is
	if got != want {
		t.Errorf("docs/trace-format.md shows:\n%s\nverify check prints:\n%s", want, got)
	}
}

func TestReplayHTMLAndFrom(t *testing.T) {
	page := filepath.Join(t.TempDir(), "r.html")
	code, out, errs := run(t, "replay", "--html", page, "--from", "9", td("steal_with_local_work.jsonl"))
	if code != cli.ExitViolated {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if strings.Contains(out, "#8 w1 spawn") || !strings.Contains(out, "     9  #9 w1 poll-end t2 ready") {
		t.Errorf("--from 9 should print events from the 9th on:\n%s", out)
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), `"Rule":"WORKER-STEAL"`) || !strings.Contains(out, "timeline: "+page) {
		t.Errorf("replay --html: %v; output:\n%s", err, out)
	}
}

func TestCheckStdin(t *testing.T) {
	f, err := os.Open(td("steal_with_local_work.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	code, out, errs := run(t, "check", "-")
	if code != cli.ExitViolated || !strings.Contains(out, "-: VIOLATION at event 10 (line 13)") || strings.Contains(out, "see it:") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

// writeCycling writes a conforming fifo trace of about n events: 1,000
// tasks polled to Pending and woken again and again, as bench/gentrace
// -tasks 1000 does.
func writeCycling(tb testing.TB, name string, n int) {
	var b strings.Builder
	b.WriteString(`{"format":"execspec-trace","version":1,"executor":"cycling","workers":1,"policy":"fifo"}` + "\n")
	seq := 0
	ev := func(t int, rest string) {
		seq++
		fmt.Fprintf(&b, `{"seq":%d,"task":%d,%s}`+"\n", seq, t, rest)
	}
	const k = 1000
	for t := 1; t <= k; t++ {
		ev(t, `"kind":"spawn","queue":"global"`)
	}
	t := 1 // the head of the global queue
	for ; seq < n-4*k; t = t%k + 1 {
		ev(t, `"kind":"take","worker":0,"source":"global"`)
		ev(t, `"kind":"poll-begin","worker":0`)
		ev(t, `"kind":"poll-end","worker":0,"result":"pending"`)
		ev(t, `"kind":"wake","outcome":"scheduled","queue":"global"`)
	}
	for range k {
		ev(t, `"kind":"take","worker":0,"source":"global"`)
		ev(t, `"kind":"poll-begin","worker":0`)
		ev(t, `"kind":"poll-end","worker":0,"result":"ready"`)
		t = t%k + 1
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkCheck is verify check on a 1e6-event conforming trace, reading
// included: the model replay's side of BenchmarkCheckPartial.
//
//	go test -run '^$' -bench 'Check$' -benchtime 5x ./cmd/verify/internal/check/
func BenchmarkCheck(b *testing.B) {
	name := filepath.Join(b.TempDir(), "cycling.jsonl")
	writeCycling(b, name, 1_000_000)
	benchCheck(b, name)
}

// benchCheck runs verify check on the conforming trace in name, once an
// iteration.
func benchCheck(b *testing.B, name string) {
	for b.Loop() {
		var out, errs bytes.Buffer
		if code := verify(context.Background(), []string{"check", name}, &out, &errs); code != cli.ExitHolds {
			b.Fatalf("exit %d\n%s\n%s", code, out.String(), errs.String())
		}
	}
}

// TestFlagsAfterFile: flags may follow the file, as they may precede it;
// after "--" a word that looks like a flag is a file name.
func TestFlagsAfterFile(t *testing.T) {
	runCases(t, []commandCase{
		{[]string{"check", td("conforms.jsonl"), "--json"}, cli.ExitHolds, []string{`"verdict":"holds"`}, nil},
		{[]string{"replay", td("steal_with_local_work.jsonl"), "--from", "5"}, cli.ExitViolated, []string{"VIOLATION of WORKER-STEAL"}, nil},
		{[]string{"check", td("conforms.jsonl"), "--bogus"}, cli.ExitUsage, nil, []string{"flag provided but not defined: -bogus"}},
		{[]string{"check", "--json", "--", "--json"}, cli.ExitUsage, nil, []string{"--json: no such file"}},
		{[]string{"check", td("conforms.jsonl"), td("conforms.jsonl")}, cli.ExitUsage, nil, []string{"want one trace FILE"}},
	})
}

// FuzzCheckFlags: parsing and validating the flags of verify check never
// panics, and whatever validation accepts lies in the documented ranges.
func FuzzCheckFlags(f *testing.F) {
	clitest.FuzzFlags(f, func(args []string) string {
		var c checkFlags
		fs := checkFlagSet(io.Discard, &c)
		if fs.Parse(args) != nil || cli.ValidateFlags(fs, checkFlagSpecs(&c)) != nil || c.last >= 0 && c.last <= maxLast && c.linBudget >= time.Millisecond && c.stuckAfter >= 1 {
			return ""
		}
		return fmt.Sprintf("last %d, lin-budget %v, stuck-after %v", c.last, c.linBudget, c.stuckAfter)
	}, "--last 9223372036854775806 x", "--last -1 x", "--linearizability --lin-budget 1ns x")
}
