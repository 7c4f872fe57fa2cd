package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// htmlMark reads the mark embedded in a timeline page: the marked event's
// number (from 1) and the symptom's, 0 when absent.
func htmlMark(t *testing.T, file string) (root, symptom int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	const open = `id="trace-data">`
	i := strings.Index(page, open)
	if i < 0 {
		t.Fatalf("%s: no trace data", file)
	}
	j := strings.Index(page[i:], "</script>")
	var d struct {
		Mark *struct {
			Index   int
			Symptom *struct{ Index int }
		} `json:"mark"`
	}
	if err := json.Unmarshal([]byte(page[i+len(open):i+j]), &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if d.Mark == nil {
		return 0, 0
	}
	root = d.Mark.Index + 1
	if d.Mark.Symptom != nil {
		symptom = d.Mark.Symptom.Index + 1
	}
	return root, symptom
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var (
	modelRoot    = regexp.MustCompile(`(?m)^  root cause: event (\d+) `)
	modelSymptom = regexp.MustCompile(`(?m)^  symptom:    event (\d+): `)
	tableRoot    = regexp.MustCompile(`(?m)^\s+(\d+)\s.*← root cause`)
	checkAt      = regexp.MustCompile(`VIOLATION at event (\d+) `)
	replayAt     = regexp.MustCompile(`(?m)^\s+(\d+)  .*\n\s+VIOLATION of `)
)

// Every broken variant of the model names one root cause, with one number,
// in all five views: verify model (its text, its table and --json), verify
// check (text and --json), verify replay, and the HTML timelines that model
// and check write.
func TestCulpritSameInEveryView(t *testing.T) {
	for _, tc := range []struct {
		variant string
		args    []string
		root    string // the rule of the root cause (a regexp)
		what    string // in the root cause's message: what the broken rule did
	}{
		{"lost-wakeup", nil, "WAKE", "reported dropped, but t1 was RUNNING"},
		{"duplicate-enqueue", nil, "WAKE", "reported scheduled onto global, but t1 was already QUEUED"},
		{"enqueue-while-running", nil, "WAKE", "reported scheduled onto global, but t1 was RUNNING"},
		{"steal-owner-end", nil, "WORKER-STEAL", "local queue is empty"},
		{"overflow-drop", nil, "WAKE|SPAWN|TASK-SUSPEND", "queue is full"},
		{"lost-wakeup", []string{"--invariants", "none", "--property", "eventually-done"}, "WAKE", "reported dropped"},
		{"no-aging", []string{"--policy", "priority", "--endless", "--workers", "1", "--tasks", "2", "--property", "fairness"}, "", ""},
	} {
		t.Run(tc.variant+strings.Join(tc.args, ""), func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"model", "-q", "--parallel", "1", "--variant", tc.variant, "--out", dir}, tc.args...)
			code, text, stderr := run(t, args...)
			if code != exitViolated {
				t.Fatalf("verify %s: exit %d, want 1\n%s%s", strings.Join(args, " "), code, text, stderr)
			}
			code, js, _ := run(t, append(args, "--json")...)
			if code != exitViolated {
				t.Fatalf("--json: exit %d", code)
			}
			var mj struct {
				Trace     string
				Timeline  string
				RootCause *struct {
					Event   int
					Rule    string
					Message string
				} `json:"root_cause"`
				Symptom *struct{ Event int }
			}
			var all struct{ Results []json.RawMessage }
			if err := json.Unmarshal([]byte(js), &all); err != nil || len(all.Results) != 1 {
				t.Fatalf("%v: %s", err, js)
			}
			if err := json.Unmarshal(all.Results[0], &mj); err != nil {
				t.Fatalf("%v: %s", err, js)
			}
			if tc.root == "" {
				// The policy breaks the property with every step an
				// enabled rule: no view names a root-cause event.
				if mj.RootCause != nil || modelRoot.MatchString(text) {
					t.Fatalf("a root cause is named for a run of enabled rules:\n%s", text)
				}
				if code, out, _ := run(t, "check", mj.Trace); code == exitViolated || checkAt.MatchString(out) {
					t.Errorf("check blames an event of a run of enabled rules (exit %d):\n%s", code, out)
				}
				return
			}
			if mj.RootCause == nil || mj.Symptom == nil {
				t.Fatalf("--json names no root cause or symptom: %s", js)
			}
			n := mj.RootCause.Event
			if !regexp.MustCompile("^("+tc.root+")$").MatchString(mj.RootCause.Rule) || !strings.Contains(mj.RootCause.Message, tc.what) {
				t.Errorf("root cause is a %s: %s; want a %s where %q", mj.RootCause.Rule, mj.RootCause.Message, tc.root, tc.what)
			}
			views := map[string]int{"model --json": n}
			m := modelRoot.FindStringSubmatch(text)
			s := modelSymptom.FindStringSubmatch(text)
			tr := tableRoot.FindStringSubmatch(text)
			if m == nil || s == nil || tr == nil {
				t.Fatalf("verify model names no root cause or symptom, or its table points at none:\n%s", text)
			}
			views["model"], views["model's table"] = atoi(t, m[1]), atoi(t, tr[1])
			if sym := atoi(t, s[1]); sym != mj.Symptom.Event || sym < n {
				t.Errorf("symptom at event %d (--json %d); want it at or after the root cause %d", sym, mj.Symptom.Event, n)
			}
			root, sym := htmlMark(t, mj.Timeline)
			views["model's timeline"] = root
			if sym != mj.Symptom.Event {
				t.Errorf("the timeline's symptom is event %d, want %d", sym, mj.Symptom.Event)
			}
			viewTrace(t, dir, mj.Trace).sameRootCause(t, n, views, "--json of model")
			t.Logf("root cause event %d, symptom event %d", n, mj.Symptom.Event)
		})
	}
}

// traceViews is what verify's views of a trace name as its root cause:
// check's text, check's timeline, check --json and replay (each 0 when it
// names none), with check's exit code and what each printed.
type traceViews struct {
	checkCode                     int
	checkOut, jsonOut, replayOut  string
	check, timeline, json, replay int
}

// viewTrace runs check (with --html into dir), check --json and replay on
// trace, and reads the event each names as the root cause.
func viewTrace(t *testing.T, dir, trace string) traceViews {
	t.Helper()
	var v traceViews
	html := filepath.Join(dir, "check.html")
	v.checkCode, v.checkOut, _ = run(t, "check", "--html", html, trace)
	if c := checkAt.FindStringSubmatch(v.checkOut); c != nil {
		v.check = atoi(t, c[1])
	}
	v.timeline, _ = htmlMark(t, html)
	_, v.jsonOut, _ = run(t, "check", "--json", trace)
	var cj struct{ Violation *struct{ Event int } }
	if err := json.Unmarshal([]byte(v.jsonOut), &cj); err != nil {
		t.Fatalf("check --json: %v %s", err, v.jsonOut)
	}
	if cj.Violation != nil {
		v.json = cj.Violation.Event
	}
	_, v.replayOut, _ = run(t, "replay", trace)
	if r := replayAt.FindStringSubmatch(v.replayOut); r != nil {
		v.replay = atoi(t, r[1])
	}
	return v
}

// blames reports whether any view names a root cause.
func (v traceViews) blames() bool {
	return v.checkCode == exitViolated || v.check != 0 || v.timeline != 0 || v.json != 0 || v.replay != 0
}

// sameRootCause fails t unless check, its timeline, check --json, replay
// and the caller's own views (added to views) all name event n, the root
// cause that the view named by what found.
func (v traceViews) sameRootCause(t *testing.T, n int, views map[string]int, what string) {
	t.Helper()
	for _, w := range []struct {
		name  string
		event int
		out   string
	}{{"check", v.check, v.checkOut}, {"check's timeline", v.timeline, v.checkOut}, {"check --json", v.json, v.jsonOut}, {"replay", v.replay, v.replayOut}} {
		if w.event == 0 {
			t.Errorf("%s names no root cause:\n%s", w.name, w.out)
			continue
		}
		views[w.name] = w.event
	}
	for view, got := range views {
		if got != n {
			t.Errorf("%s names event %d as the root cause, %s %d", view, got, what, n)
		}
	}
}
