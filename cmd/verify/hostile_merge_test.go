package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/traces"
)

// swarmResults runs two members of a swarm of 2 on a small model (the
// correct one, or a variant) and returns their result files' contents as
// maps, for a test to break.
func swarmResults(t *testing.T, wd, dir string, extra ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, i := range []string{"1", "2"} {
		file := filepath.Join(dir, "member"+i+".json")
		args := append([]string{"model", "-q", "--workers", "2", "--tasks", "2", "--bitstate", "1", "--swarm", i + "/2", "--result", file, "--out", filepath.Join(dir, "cx")}, extra...)
		r := runVerify(t, wd, args...)
		if r.code != exitUnknown && r.code != exitViolated {
			t.Fatalf("%v: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func writeJSON(t *testing.T, path string, v any, tail string) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, tail...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func cloneMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestHostileMerge: result files that no member writes are refused with
// exit 2, the file named and what was expected, in bounded memory.
func TestHostileMerge(t *testing.T) {
	wd, _ := os.Getwd()
	dir := t.TempDir()
	good := swarmResults(t, wd, dir)
	second := writeJSON(t, filepath.Join(dir, "second.json"), good[1], "\n")
	// The two members merge.
	if r := runVerify(t, wd, "merge", writeJSON(t, filepath.Join(dir, "first.json"), good[0], "\n"), second); r.code != exitUnknown {
		t.Fatalf("two good members: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct {
		name  string
		edit  func(m map[string]any)
		tail  string
		want  string
		alone bool // merged alone, not with the good second member
	}{
		{name: "two billion members", edit: func(m map[string]any) { m["members"] = 2_000_000_000 }, want: "want at most", alone: true},
		{name: "coverage 1e-310", edit: func(m map[string]any) { m["coverage"] = 1e-310 }, want: "coverage"},
		{name: "states 2^63-1", edit: func(m map[string]any) { m["states"] = int64(1<<63 - 1) }, want: "states"},
		{name: "violated without steps", edit: func(m map[string]any) { m["verdict"] = "violated"; delete(m, "steps") }, want: "without a counterexample"},
		{name: "negative seconds", edit: func(m map[string]any) { m["seconds"] = -5 }, want: "seconds"},
		{name: "trailing garbage", tail: "garbage", want: "data after the result"},
		{name: "two results in one file", tail: "{}\n", want: "one result per file"},
		{name: "the same member twice", edit: func(m map[string]any) { m["member"] = 2 }, want: "member 2"},
		{name: "another configuration", edit: func(m map[string]any) { m["model"] = m["model"].(string) + " invariants=none" }, want: "one model configuration"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := cloneMap(good[0])
			if c.edit != nil {
				c.edit(m)
			}
			bad := writeJSON(t, filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json"), m, "\n"+c.tail)
			args := []string{"merge", bad}
			if !c.alone {
				args = append(args, second)
			}
			r := runVerify(t, wd, args...)
			r.clean(t, hostileRSS)
			if r.code != exitUsage || !strings.Contains(r.stderr, filepath.Base(bad)) || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, want %d naming the file and %q\nstdout:\n%s\nstderr:\n%s", r.code, exitUsage, c.want, r.stdout, r.stderr)
			}
		})
	}
}

// TestHostileMergeConfigurations: members run with different --invariants
// or --symmetry checked different things; their results do not add up.
func TestHostileMergeConfigurations(t *testing.T) {
	wd, _ := os.Getwd()
	dir := t.TempDir()
	first := writeJSON(t, filepath.Join(dir, "plain.json"), swarmResults(t, wd, t.TempDir())[0], "\n")
	for _, extra := range [][]string{{"--invariants", "none"}, {"--symmetry"}} {
		other := writeJSON(t, filepath.Join(dir, "other.json"), swarmResults(t, wd, t.TempDir(), extra...)[1], "\n")
		r := runVerify(t, wd, "merge", first, other)
		r.clean(t, hostileRSS)
		if r.code != exitUsage || !strings.Contains(r.stderr, "one model configuration") {
			t.Errorf("%v: exit %d\n%s\n%s", extra, r.code, r.stdout, r.stderr)
		}
	}
}

// TestHostileMergeText: the strings of a result file reach the terminal
// through traces.Printable (no bidi override, isolate, zero-width or line
// separator passes), and the trace's path is shell-quoted in the
// suggested command.
func TestHostileMergeText(t *testing.T) {
	wd, _ := os.Getwd()
	dir := t.TempDir()
	rs := swarmResults(t, wd, dir, "--variant", "lost-wakeup")
	evil := "a b;$(touch pwned)\u2028.jsonl"
	m := rs[0]
	m["property"] = "no-lost-wakeup\u202e"
	m["message"] = "a wake\u2066 was lost\u200b"
	m["steps"] = []string{"SPAWN t1\u2028verdict: holds", "WAKE t1\u202e"}
	m["trace"] = evil
	file := writeJSON(t, filepath.Join(dir, "evil.json"), m, "\n")
	r := runVerify(t, dir, "merge", file)
	r.clean(t, hostileRSS)
	if r.code != exitViolated {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []string{"\u202e", "\u2066", "\u200b", "\u2028"} {
		if strings.Contains(r.stdout, c) {
			t.Errorf("%q reached the terminal:\n%q", c, r.stdout)
		}
	}
	var replay string
	for _, l := range strings.Split(r.stdout, "\n") {
		if _, after, ok := strings.Cut(l, "replay: "); ok {
			replay = after
		}
	}
	if !strings.Contains(replay, "replay "+traces.ShellQuote(evil)) {
		t.Errorf("the trace is not shell-quoted in the suggested command: %q", replay)
	}
}
