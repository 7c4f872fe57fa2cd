package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/execspec/execspec/properties/broken"
)

var (
	runRoot  = regexp.MustCompile(`(?m)^  root cause: event (\d+) \(seq \d+\): (\S+)`)
	runTrace = regexp.MustCompile(`(?m)^  trace: (\S+\.jsonl) `)
	runTL    = regexp.MustCompile(`(?m)^  timeline: (\S+\.html)$`)
)

// Every executor of the broken catalogue writes a trace and a timeline for
// its failure in verify run, and where its defect shows in its own trace,
// names one root cause, with one number, in every view: verify run's text
// and timeline, verify check (text, --json, its timeline) and verify
// replay. Where the defect cannot show in the trace, the entry says why,
// and the test asserts that no view blames an event (the property that
// caught it is the timeline's only mark).
func TestBrokenCulpritSameInEveryView(t *testing.T) {
	for _, tc := range []struct {
		name, cases, seed string
		rule              string // the root cause's rule, as run prints it; "" when unseen
		unseen            string // why the defect cannot show in the trace
		later             bool   // unseen at the defect, it may show at a later event (then every view must agree on that)
	}{
		{name: "double-enqueue", cases: "exactly-once", seed: "17620083821312915060", rule: "WAKE"},
		{name: "repoll-after-ready", cases: "exactly-once", seed: "11138245755021517740", rule: "poll-begin"},
		{name: "steal-owner-end", cases: "exactly-once", seed: "11197276392218828937", rule: "WORKER-STEAL"},
		{name: "overflow-drops", cases: "exactly-once", seed: "12778552627547546568", rule: "SPAWN|WAKE|TASK-SUSPEND|requeue"}, // the drop is at whichever push meets the full queue: which one depends on the interleaving
		{name: "global-starved", cases: "fairness", seed: "7845573441621794413", rule: "POLL-LOCAL"},
		{name: "clone-wakes-nothing", cases: "waker-clone", seed: "2293379466800617262", rule: "WAKE"},
		{name: "lost-wakeup", cases: "exactly-once", seed: "11372200462952202358",
			unseen: "the wake is recorded as it happened (notified); the loss is the re-queue that never comes, and a trace may end before a re-queue, so no event departs there (a later take of the task, woken again, out of the queue's order, may)", later: true},
		{name: "park-no-recheck", cases: "exactly-once", seed: "14541994773768052399",
			unseen: "the defect is in parking, which the model has no rule for: every recorded step is a step of the model; the task is left QUEUED"},
		{name: "lost-wake-check-park", cases: "exactly-once", seed: "12631259342653557244",
			unseen: "the lost unpark signal is parking, which the model has no rule for; the task is left QUEUED"},
		{name: "shutdown-drops", cases: "close-waits", seed: "5355331210768995798",
			unseen: "Close is no rule of the model: the trace of the tasks dropped at shutdown is a prefix of a run that conforms"},
		{name: "priority-no-aging", cases: "fairness", seed: "22704790540000415",
			unseen: "a trace carries no priorities, so the order of takes under the priority policy cannot be checked from it"},
		{name: "lifo-starves", cases: "fairness", seed: "2243271036484709635",
			unseen: "the bound on takes from the LIFO slot in a row is not part of the model (the checker keeps no count of it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"run", "--executor", "broken/" + tc.name, "--cases", tc.cases, "--seed", tc.seed, "--checks", "1", "--shrink-time", "300ms", "--out", dir}
			code, text, stderr := run(t, args...)
			if code != exitViolated {
				t.Fatalf("verify %s: exit %d, want 1\n%s%s", strings.Join(args, " "), code, text, stderr)
			}
			tr, tl := runTrace.FindStringSubmatch(text), runTL.FindStringSubmatch(text)
			if tr == nil || tl == nil {
				t.Fatalf("verify run writes no trace or no timeline:\n%s", text)
			}
			trace := tr[1]
			if _, err := os.Stat(trace); err != nil {
				t.Fatal(err)
			}
			runTimeline, symptom := htmlMark(t, tl[1])
			v := viewTrace(t, dir, trace)
			if tc.unseen != "" && !(tc.later && runRoot.MatchString(text)) {
				// Seen by the property alone: no view blames an event.
				if m := runRoot.FindStringSubmatch(text); m != nil || v.blames() || runTimeline != 0 {
					t.Fatalf("an event is blamed for a defect the trace cannot show (%s): run %v, run's timeline %d, views %+v\n%s",
						tc.unseen, m, runTimeline, v, text)
				}
				t.Logf("not in the trace: %s", tc.unseen)
				return
			}
			m := runRoot.FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("verify run names no root cause:\n%s", text)
			}
			if tc.rule != "" && !regexp.MustCompile("^("+tc.rule+")$").MatchString(m[2]) {
				t.Errorf("root cause is a %s, want a %s:\n%s", m[2], tc.rule, text)
			}
			n := atoi(t, m[1])
			v.sameRootCause(t, n, map[string]int{"run's timeline": runTimeline}, "verify run")
			if symptom != 0 {
				t.Errorf("the symptom (the property, at the end of the run) is marked at event %d", symptom)
			}
			t.Logf("root cause event %d: %s", n, m[2])
		})
	}
}

// The table above covers the whole catalogue.
func TestBrokenCulpritTableComplete(t *testing.T) {
	b, err := os.ReadFile("run_broken_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range broken.Catalogue() {
		if !strings.Contains(string(b), `{name: "`+e.Name+`"`) {
			t.Errorf("broken/%s is not in TestBrokenCulpritSameInEveryView", e.Name)
		}
	}
}

// The correct bases record traces that conform: the conformance cases find
// nothing wrong with any of them.
func TestBrokenBasesConform(t *testing.T) {
	for _, b := range broken.Bases() {
		t.Run(b.Name, func(t *testing.T) {
			args := []string{"run", "--executor", "broken/" + b.Name, "--property", "conformance", "--seed", "1", "--checks", "40", "--out", t.TempDir()}
			if code, text, stderr := run(t, args...); code != exitHolds {
				t.Fatalf("verify %s: exit %d, want 0\n%s%s", strings.Join(args, " "), code, text, stderr)
			}
		})
	}
}
