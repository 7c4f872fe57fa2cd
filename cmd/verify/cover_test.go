package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCoverJSON(t *testing.T) {
	var out, errb bytes.Buffer
	code := dispatch(context.Background(), []string{"cover", "--runs", "200", "--json", "-q"}, &out, &errb)
	if code != exitHolds {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	var j map[string]any
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	for _, k := range []string{"model_states", "model_transitions", "visited_states", "visited_transitions", "outside", "excluded_states", "rules", "variants", "unvisited_classes"} {
		if _, ok := j[k]; !ok {
			t.Errorf("no %q in the JSON", k)
		}
	}
	if j["model_states"].(float64) != 1580 || j["model_transitions"].(float64) != 4971 || j["outside"].(float64) != 0 {
		t.Errorf("model_states %v, model_transitions %v, outside %v", j["model_states"], j["model_transitions"], j["outside"])
	}
	if v := j["visited_states"].(float64); v < 100 || v > 1580 {
		t.Errorf("visited_states %v", v)
	}
}

func TestCoverInterrupted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	code := dispatch(ctx, []string{"cover", "--time", "30s"}, &out, &errb)
	if code != exitUnknown {
		t.Fatalf("exit %d, want %d:\n%s", code, exitUnknown, out.String())
	}
	if !strings.Contains(out.String(), "stopped: interrupted") || !strings.Contains(out.String(), "visited") {
		t.Fatalf("no partial result:\n%s", out.String())
	}
}

func TestCoverHTMLAndUsage(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "cover.html")
	var out, errb bytes.Buffer
	if code := dispatch(context.Background(), []string{"cover", "--executor", "wakeable", "--runs", "100", "-q", "--html", page}, &out, &errb); code != exitHolds {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Spec coverage: wakeable", "WAKE", "Unvisited states, by class", "Unvisited transitions, by rule variant"} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("the page lacks %q", s)
		}
	}
	// A symlink at the output is replaced by the page, never followed.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	if code := dispatch(context.Background(), []string{"cover", "--executor", "fifo", "--runs", "10", "-q", "--html", link}, &out, &errb); code != exitUsage {
		t.Errorf("writing onto a symlink: exit %d, want %d", code, exitUsage)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the symlink's target was overwritten")
	}
	for _, args := range [][]string{
		{"cover", "--executor", "nosuch"},
		{"cover", "--strategy", "nosuch", "--runs", "1"},
		{"cover", "--goal", "120"},
		{"cover", "--strategy", "exhaustive", "--preemptions", "-1"},
		{"cover", "extra"},
	} {
		if code := dispatch(context.Background(), args, &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// A deep-state mutant is caught: exit 1, with the failing event.
func TestCoverDeepMutant(t *testing.T) {
	var out, errb bytes.Buffer
	code := dispatch(context.Background(), []string{"cover", "--executor", "deep/requeue-overfill", "--pendings", "2", "--strategy", "guided", "--time", "20s", "--stop-at-failure", "-q"}, &out, &errb)
	if code != exitViolated || !strings.Contains(out.String(), "first failure") || !strings.Contains(out.String(), "overflows to the global queue") {
		t.Fatalf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
}

// The exhaustive strategy: its figures in the text and in --json.
func TestCoverExhaustive(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch(context.Background(), []string{"cover", "--strategy", "exhaustive", "--preemptions", "2", "--runs", "100", "-q"}, &out, &errb); code != exitHolds {
		t.Fatalf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "runs cut at a model state expanded elsewhere") {
		t.Errorf("no exhaustive figures:\n%s", out.String())
	}
	out.Reset()
	if code := dispatch(context.Background(), []string{"cover", "--strategy", "exhaustive", "--runs", "100", "-q", "--json"}, &out, &errb); code != exitHolds {
		t.Fatalf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
	var j struct {
		Strategy   string `json:"strategy"`
		Visited    int    `json:"visited_states"`
		Exhaustive struct {
			Cuts int `json:"cuts"`
		} `json:"exhaustive"`
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j.Strategy != "exhaustive" || j.Visited == 0 || j.Exhaustive.Cuts == 0 {
		t.Errorf("--json: %+v", j)
	}
}

// The priority executor's traces are format v1.1 (priorities on spawns,
// aging in the header): `verify cover` projects them onto the model's
// priority policy and reports coverage.
func TestCoverPriority(t *testing.T) {
	var out, errb bytes.Buffer
	code := dispatch(context.Background(), []string{"cover", "--executor", "priority", "--runs", "200", "--json", "-q"}, &out, &errb)
	if code != exitHolds {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	var j map[string]any
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if j["outside"].(float64) != 0 || j["visited_states"].(float64) < 100 {
		t.Fatalf("outside %v, visited_states %v", j["outside"], j["visited_states"])
	}
}
