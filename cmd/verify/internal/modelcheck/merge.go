package modelcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/explore"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/traces"
)

// Merge is verify merge: the result files of a swarm combined into one verdict.
var Merge = cli.Command{Name: "merge", Summary: "combine the result files of a swarm (verify model --swarm I/N) into one verdict", Run: runMerge}

// mergeHelp is what `verify merge -h` prints before the flags; mergeExits, after them.
const mergeHelp = `usage: verify merge [--json] FILE...

Combines the result files of the members of a swarm (verify model --swarm I/N)
into one verdict: violated if any member found a violation (the shortest
counterexample is shown), otherwise unknown with a combined coverage estimate.

Example:
  d=$(mktemp -d)
  for i in 1 2 3 4; do verify model -q --workers 3 --tasks 4 --pendings 2 --swarm $i/4 --bitstate 16 --result $d/$i.json & done; wait
  verify merge $d/*.json
`

const mergeExits = `Exit codes: 1 violated, 2 usage or input error, 3 unknown (no violation found).
`

func runMerge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("verify merge", stderr, mergeHelp, mergeExits)
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	if code, ok := cli.ParseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "verify merge: no result files given")
		return cli.ExitUsage
	}
	var rs []*explore.SwarmResult
	set := swarmSet{files: map[int]string{}}
	for _, name := range fs.Args() {
		in, closeIn, err := cli.OpenInput(ctx, name)
		var r *explore.SwarmResult
		if err == nil {
			r, err = readSwarmResult(name, in)
			closeIn()
		}
		if err == nil {
			err = set.add(name, r)
		}
		if cli.IsInterrupted(err) || ctx.Err() != nil {
			fmt.Fprintf(stderr, "verify merge: interrupted while reading %s; no verdict\n", cli.Term(name))
			return cli.ExitUnknown
		}
		if err != nil {
			fmt.Fprintf(stderr, "verify merge: %s\n", cli.Term(err.Error()))
			return cli.ExitUsage
		}
		rs = append(rs, r)
	}
	v, err := explore.MergeSwarm(rs)
	if err != nil {
		fmt.Fprintf(stderr, "verify merge: %v\n", err)
		return cli.ExitUsage
	}
	if *asJSON {
		printMergeJSON(stdout, v)
	} else {
		printMerge(stdout, v)
	}
	if v.Verdict == checker.Violated {
		return cli.ExitViolated
	}
	return cli.ExitUnknown
}

func printMerge(w io.Writer, v *explore.SwarmVerdict) {
	head := fmt.Sprintf("swarm of %d (%d results)", v.Of, v.Members)
	if v.Verdict == checker.Violated {
		first := v.Violations[0]
		var by []string
		for _, r := range v.Violations[:min(len(v.Violations), maxListed)] {
			by = append(by, fmt.Sprint(r.Member))
		}
		if len(v.Violations) > maxListed {
			by = append(by, fmt.Sprintf("… (%d in all)", len(v.Violations)))
		}
		fmt.Fprintf(w, "VIOLATED  %s: %s: %s\n", head, cli.Term(first.Property), cli.Term(first.Message))
		fmt.Fprintf(w, "  model: %s\n  found by members %s (shortest first; the first after %.2fs)\n", cli.Term(v.Model), strings.Join(by, ", "), v.FirstViolation)
		fmt.Fprintf(w, "\n  shortest counterexample (member %d), %d steps:\n", first.Member, len(first.Steps))
		for k, s := range first.Steps {
			fmt.Fprintf(w, "    %4d  %s\n", k+1, cli.Term(s))
		}
		if first.Trace != "" {
			fmt.Fprintf(w, "\n  trace:  %s\n  replay: %s replay %s\n", cli.Term(first.Trace), cli.SelfCommand(), cli.ClipLine(traces.ShellQuote(first.Trace)))
		}
	} else {
		cov := "coverage unknown (no member searched to the end: each had a depth bound or ran out of budget)"
		if v.Coverage >= 0 {
			cov = fmt.Sprintf("coverage estimate %.2f %% of about %s reachable", 100*v.Coverage, human(int64(v.Total)))
		}
		fmt.Fprintf(w, "UNKNOWN   %s: no violation found; together the searches visited about %s distinct states, %s\n", head, human(int64(v.Union)), cov)
		fmt.Fprintf(w, "  model: %s\n  longest member: %.2fs\n", cli.Term(v.Model), v.Seconds)
	}
	if len(v.Missing) > 0 {
		var ms []string
		for _, m := range v.Missing[:min(len(v.Missing), maxListed)] {
			ms = append(ms, fmt.Sprint(m))
		}
		if len(v.Missing) > maxListed {
			ms = append(ms, fmt.Sprintf("… (%d missing in all)", len(v.Missing)))
		}
		fmt.Fprintf(w, "  missing members: %s\n", strings.Join(ms, ", "))
	}
}

// maxListed bounds the members a line lists.
const maxListed = 20

// Bounds of what a member's result may say. A bitstate filter is at most
// 1 TiB (2^43 bits) and each state sets a bit, so a search that says it
// visited more than 2^48 states, or whose states ÷ coverage estimate more
// than 2^53 reachable ones (the largest count a float64 holds exactly), is
// not a result of verify model.
const (
	maxSwarmStates   = 1 << 48
	maxSwarmEstimate = 1 << 53
	maxSwarmSeconds  = 1e8 // three years
)

// readSwarmResult reads one result file: exactly one result (a second
// one, or anything after it but blanks, is refused, not ignored), in at
// most explore.MaxSwarmResult bytes, every field within what a member
// writes.
func readSwarmResult(name string, in io.Reader) (*explore.SwarmResult, error) {
	b, err := io.ReadAll(io.LimitReader(in, explore.MaxSwarmResult+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > explore.MaxSwarmResult {
		return nil, fmt.Errorf("%s: larger than any swarm result (%d MiB)", name, explore.MaxSwarmResult>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var first, more json.RawMessage
	if err := dec.Decode(&first); err == nil {
		end := dec.InputOffset()
		if err := dec.Decode(&more); err != io.EOF {
			return nil, fmt.Errorf("%s: data after the result, at byte %d: want one result per file", name, end)
		}
	}
	r, err := explore.ReadSwarmResult(name, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return r, checkSwarmResult(name, r)
}

// checkSwarmResult refuses what a result file may say but no member of a
// swarm writes: each count is bounded before it sizes anything.
func checkSwarmResult(name string, r *explore.SwarmResult) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, a...))
	}
	switch {
	case r.Members > maxSwarm:
		return bad("a swarm of %d members: want at most %d", r.Members, maxSwarm)
	case r.States < 0 || r.States > maxSwarmStates:
		return bad("states %d: want 0 to %d", r.States, int64(maxSwarmStates))
	case r.Transitions < 0 || r.Depth < 0 || r.DepthBound < 0 || r.Cut < 0:
		return bad("transitions %d, depth %d, depth bound %d, cut %d: want 0 or more", r.Transitions, r.Depth, r.DepthBound, r.Cut)
	case !(r.Seconds >= 0 && r.Seconds <= maxSwarmSeconds):
		return bad("seconds %g: want 0 to %g", r.Seconds, maxSwarmSeconds)
	case r.Coverage > 0 && float64(r.States)/r.Coverage > maxSwarmEstimate:
		return bad("coverage %g of %d states estimates %g reachable states: want at most 2^53 (a coverage this small is not an estimate)", r.Coverage, r.States, float64(r.States)/r.Coverage)
	case !(r.Fill >= 0 && r.Fill <= 1) || !(r.Lost >= 0 && r.Lost <= 1):
		return bad("fill %g, lost %g: want fractions, 0 to 1", r.Fill, r.Lost)
	case r.Hashes < 1 || r.Hashes > 16 || r.FilterBytes < 1 || r.FilterBytes > 1<<40:
		return bad("%d hashes, a filter of %d bytes: want 1 to 16 hashes and 1 byte to 1 TiB", r.Hashes, r.FilterBytes)
	case r.Verdict == checker.Violated.String() && len(r.Steps) == 0:
		return bad("verdict violated without a counterexample (no steps)")
	case r.Verdict != checker.Violated.String() && len(r.Steps) > 0:
		return bad("verdict %s with a counterexample of %d steps", cli.Term(r.Verdict), len(r.Steps))
	}
	return nil
}

// swarmSet checks that the results merged are of one swarm: one model
// configuration, one size, each member once; the error names both files.
type swarmSet struct {
	first   string // the first file
	model   string
	members int
	files   map[int]string // member → file
}

func (s *swarmSet) add(name string, r *explore.SwarmResult) error {
	if s.first == "" {
		s.first, s.model, s.members = name, r.Model, r.Members
	}
	switch {
	case r.Model != s.model:
		return fmt.Errorf("%s checked %s, but %s checked %s: want results of one model configuration", name, cli.Term(r.Model), s.first, cli.Term(s.model))
	case r.Members != s.members:
		return fmt.Errorf("%s is of a swarm of %d, but %s of a swarm of %d: want one swarm", name, r.Members, s.first, s.members)
	case s.files[r.Member] == name:
		return fmt.Errorf("%s given twice: want each member once", name)
	case s.files[r.Member] != "":
		return fmt.Errorf("%s and %s are both member %d: want each member once", s.files[r.Member], name, r.Member)
	}
	s.files[r.Member] = name
	return nil
}

func printMergeJSON(w io.Writer, v *explore.SwarmVerdict) {
	out := struct {
		Schema         int      `json:"schema"`
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
	}{Schema: cli.JSONSchema, Verdict: v.Verdict.String(), Model: v.Model, Members: v.Members, Of: v.Of, Missing: v.Missing,
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
	cli.PrintJSON(w, out, false)
}
