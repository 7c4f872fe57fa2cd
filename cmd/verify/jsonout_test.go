package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every subcommand's --json is one object with "schema" and a "verdict"
// that agrees with the exit code (docs/json-output.md).
func TestJSONShapes(t *testing.T) {
	dir := t.TempDir()
	result := filepath.Join(dir, "r.json")
	for _, args := range [][]string{
		{"check", "--json", filepath.Join("testdata", "check", "conforms.jsonl")},
		{"check", "--json", filepath.Join("testdata", "check", "steal_with_local_work.jsonl")},
		{"model", "--json", "--workers", "2", "--tasks", "2", "--property", "all", "--parallel", "1"},
		{"model", "--json", "--workers", "2", "--tasks", "2", "--bitstate", "1", "--swarm", "1/1", "--result", result},
		{"merge", "--json", result},
		{"cover", "--json", "-q", "--executor", "fifo", "--runs", "5"},
		{"run", "--json", "--executor", "fifo", "--property", "exactly-once", "--checks", "2"},
		{"run", "--json", "--executor", "broken/lost-wakeup", "--property", "no-lost-wakeup", "--checks", "50", "--shrink-time", "100ms", "--out", dir},
	} {
		code, out, errs := run(t, args...)
		var v struct {
			Schema  *int
			Verdict string
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || strings.Count(strings.TrimSpace(out), "\n") > 0 && args[0] != "cover" {
			t.Errorf("%v: not one JSON object (%v):\n%s\n%s", args, err, out, errs)
			continue
		}
		if v.Schema == nil || *v.Schema != jsonSchema {
			t.Errorf("%v: schema %v, want %d", args, v.Schema, jsonSchema)
		}
		if v.Verdict != verdictOf(code) {
			t.Errorf("%v: verdict %q, exit %d", args, v.Verdict, code)
		}
	}
}

// Text from the input reaches every --json output escaped: check --json
// of a trace whose executor is named with a right-to-left override (the
// file name carries one too) prints \u202e, never the character, and
// decodes back to it.
func TestJSONOutputsEscapeInput(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a\u202eb.jsonl")
	trace := `{"format":"execspec-trace","version":1,"executor":"x\u202ey","workers":1,"policy":"fifo"}` + "\n" +
		`{"seq":1,"kind":"spawn","task":1,"worker":-1,"queue":"global"}` + "\n"
	if err := os.WriteFile(name, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "--json", name}} {
		_, out, _ := run(t, args...)
		if strings.ContainsRune(out, '\u202e') || !strings.Contains(out, `\u202e`) {
			t.Errorf("%v: the override is not escaped:\n%q", args, out)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}
