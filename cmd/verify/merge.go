package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/explore"
)

func init() {
	register(command{name: "merge", summary: "combine the result files of a swarm (verify model --swarm I/N) into one verdict", run: runMerge})
}

func runMerge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: verify merge [--json] FILE...")
		fmt.Fprintln(stderr, "\nCombines the result files of the members of a swarm (verify model --swarm I/N)")
		fmt.Fprintln(stderr, "into one verdict: violated if any member found a violation (the shortest")
		fmt.Fprintln(stderr, "counterexample is shown), otherwise unknown with a combined coverage estimate.")
		fmt.Fprintln(stderr, "\nExample:")
		fmt.Fprintln(stderr, "  for i in 1 2 3 4; do verify model -q --workers 4 --tasks 6 --pendings 2 --swarm $i/4 --bitstate 256 & done; wait")
		fmt.Fprintln(stderr, "  verify merge swarm-*-of-4.json")
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nExit codes: 1 violated, 2 usage or input error, 3 unknown (no violation found).")
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "verify merge: no result files given")
		return exitUsage
	}
	var rs []*explore.SwarmResult
	for _, name := range fs.Args() {
		fh, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "verify merge: %v\n", err)
			return exitUsage
		}
		r, err := explore.ReadSwarmResult(name, fh)
		fh.Close()
		if err != nil {
			fmt.Fprintf(stderr, "verify merge: %v\n", err)
			return exitUsage
		}
		rs = append(rs, r)
	}
	v, err := explore.MergeSwarm(rs)
	if err != nil {
		fmt.Fprintf(stderr, "verify merge: %v\n", err)
		return exitUsage
	}
	if *asJSON {
		printMergeJSON(stdout, v)
	} else {
		printMerge(stdout, v)
	}
	if v.Verdict == checker.Violated {
		return exitViolated
	}
	return exitUnknown
}

func printMerge(w io.Writer, v *explore.SwarmVerdict) {
	head := fmt.Sprintf("swarm of %d (%d results)", v.Of, v.Members)
	if v.Verdict == checker.Violated {
		first := v.Violations[0]
		var by []string
		for _, r := range v.Violations {
			by = append(by, fmt.Sprint(r.Member))
		}
		fmt.Fprintf(w, "VIOLATED  %s: %s: %s\n", head, sanitize(first.Property), sanitize(first.Message))
		fmt.Fprintf(w, "  model: %s\n  found by members %s (shortest first; the first after %.2fs)\n", sanitize(v.Model), strings.Join(by, ", "), v.FirstViolation)
		fmt.Fprintf(w, "\n  shortest counterexample (member %d), %d steps:\n", first.Member, len(first.Steps))
		for k, s := range first.Steps {
			fmt.Fprintf(w, "    %4d  %s\n", k+1, sanitize(s))
		}
		if first.Trace != "" {
			fmt.Fprintf(w, "\n  trace:  %s\n  replay: %s replay %s\n", sanitize(first.Trace), selfCommand(), sanitize(first.Trace))
		}
	} else {
		cov := "coverage unknown (no member searched to the end: each had a depth bound or ran out of budget)"
		if v.Coverage >= 0 {
			cov = fmt.Sprintf("coverage estimate %.2f %% of about %s reachable", 100*v.Coverage, human(int64(v.Total)))
		}
		fmt.Fprintf(w, "UNKNOWN   %s: no violation found; together the searches visited about %s distinct states, %s\n", head, human(int64(v.Union)), cov)
		fmt.Fprintf(w, "  model: %s\n  longest member: %.2fs\n", sanitize(v.Model), v.Seconds)
	}
	if len(v.Missing) > 0 {
		var ms []string
		for _, m := range v.Missing {
			ms = append(ms, fmt.Sprint(m))
		}
		fmt.Fprintf(w, "  missing members: %s\n", strings.Join(ms, ", "))
	}
}

// sanitize drops control characters (terminal escapes) from text read from
// a result file.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

func printMergeJSON(w io.Writer, v *explore.SwarmVerdict) {
	out := struct {
		Verdict        string   `json:"verdict"`
		Model          string   `json:"model"`
		Members        int      `json:"members"`
		Of             int      `json:"of"`
		Missing        []int    `json:"missing,omitempty"`
		Property       string   `json:"property,omitempty"`
		Message        string   `json:"message,omitempty"`
		FoundBy        []int    `json:"found_by,omitempty"`
		Steps          []string `json:"steps,omitempty"`
		Trace          string   `json:"trace,omitempty"`
		FirstViolation float64  `json:"first_violation_seconds,omitempty"`
		Union          float64  `json:"union_states"`
		Total          float64  `json:"estimated_reachable,omitempty"`
		Coverage       *float64 `json:"coverage,omitempty"`
		Seconds        float64  `json:"seconds"`
	}{Verdict: v.Verdict.String(), Model: v.Model, Members: v.Members, Of: v.Of, Missing: v.Missing,
		FirstViolation: v.FirstViolation, Union: v.Union, Total: v.Total, Seconds: v.Seconds}
	if v.Coverage >= 0 {
		c := v.Coverage
		out.Coverage = &c
	}
	if len(v.Violations) > 0 {
		f := v.Violations[0]
		out.Property, out.Message, out.Steps, out.Trace = f.Property, f.Message, f.Steps, f.Trace
		for _, r := range v.Violations {
			out.FoundBy = append(out.FoundBy, r.Member)
		}
	}
	b, _ := json.Marshal(out)
	fmt.Fprintln(w, string(b))
}
