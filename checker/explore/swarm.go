package explore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/execspec/execspec/checker"
)

// A swarm is N bitstate searches of one configuration, each diversified so
// that they explore different parts of the state space first (Holzmann,
// Joshi and Groce, "Swarm verification", ASE 2008). Each member writes a
// SwarmResult; MergeSwarm combines them. The members need no channel to
// each other: run them as N processes on one machine, as the N pods of a
// Kubernetes Indexed Job, or as a CI matrix (examples/swarm), then merge
// the files.

// SwarmMember returns the search options of member i (1-based) of n,
// diversified from base:
//   - the hash seed: base.Seed + i·φ (every member's filter loses other states);
//   - the successor order: member 1 keeps the rules' order, the others visit
//     successors in an order drawn from their seed;
//   - the depth bound: unless base sets one, every third member (i = 3, 6,
//     9, …) is bounded at 2^(4+i/3) steps, which finds shallow violations
//     early; the others are unbounded.
func SwarmMember(i, n int, base BitstateOptions) (BitstateOptions, error) {
	if n < 1 || i < 1 || i > n {
		return base, fmt.Errorf("swarm member %d/%d: want 1 ≤ I ≤ N", i, n)
	}
	b := base
	b.Seed = base.Seed + uint64(i)*0x9e3779b97f4a7c15
	b.Shuffle = base.Shuffle || i > 1
	if base.MaxDepth == 0 && i%3 == 0 {
		b.MaxDepth = 1 << min(4+i/3, 20)
	}
	return b, nil
}

// SwarmFormat and SwarmVersion identify a swarm result file.
const (
	SwarmFormat  = "execspec-swarm"
	SwarmVersion = 1
)

// SwarmResult is one member's outcome, as its result file holds it (JSON).
type SwarmResult struct {
	Format      string   `json:"format"`
	Version     int      `json:"version"`
	Model       string   `json:"model"` // the configuration, as model.Config.String prints it
	Member      int      `json:"member"`
	Members     int      `json:"members"`
	Seed        uint64   `json:"seed"`
	Shuffle     bool     `json:"shuffle"`
	DepthBound  int      `json:"depth_bound"`
	Verdict     string   `json:"verdict"`
	Property    string   `json:"property"`
	Message     string   `json:"message"`
	States      int64    `json:"states"`
	Transitions int64    `json:"transitions"`
	Depth       int      `json:"depth"`
	Seconds     float64  `json:"seconds"`
	FilterBytes int64    `json:"filter_bytes"`
	Hashes      int      `json:"hashes"`
	Fill        float64  `json:"fill"`
	Coverage    float64  `json:"coverage"`
	Lost        float64  `json:"lost"`
	Cut         int64    `json:"cut"`
	Complete    bool     `json:"complete"` // no budget stopped the search
	Sketch      *Sketch  `json:"sketch"`
	Steps       []string `json:"steps,omitempty"` // the counterexample, one step a line
	Trace       string   `json:"trace,omitempty"` // where the counterexample was written as a trace
}

// NewSwarmResult records member i of n's search.
func NewSwarmResult(i, n int, b BitstateOptions, r *Result, st *BitstateStats) *SwarmResult {
	s := &SwarmResult{
		Format: SwarmFormat, Version: SwarmVersion, Model: r.Config.String(),
		Member: i, Members: n, Seed: b.Seed, Shuffle: b.Shuffle, DepthBound: b.MaxDepth,
		Verdict: r.Verdict.String(), Property: r.Property, Message: r.Message,
		States: r.States, Transitions: r.Transitions, Depth: r.Depth, Seconds: r.Elapsed.Seconds(),
		FilterBytes: st.FilterBytes, Hashes: st.Hashes, Fill: st.Fill, Coverage: st.Coverage, Lost: st.Lost, Cut: st.Cut, Complete: st.Complete,
		Sketch: st.Sketch,
	}
	if cx := r.Counterexample; cx != nil {
		for _, cs := range cx.Steps {
			s.Steps = append(s.Steps, cs.Step.String())
		}
	}
	return s
}

// MaxSwarmResult is the largest result file ReadSwarmResult reads: a
// member's result is its sketch (16 KiB) and at most one counterexample, far
// below it.
const MaxSwarmResult = 16 << 20

var errSwarmTooLarge = fmt.Errorf("larger than any swarm result (%d MiB)", MaxSwarmResult>>20)

// capReader fails once more than n bytes were asked of it.
type capReader struct {
	r io.Reader
	n int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n <= 0 {
		return 0, errSwarmTooLarge
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	k, err := c.r.Read(p)
	c.n -= int64(k)
	return k, err
}

// ReadSwarmResult reads one result file's contents; name is for messages.
// It reads at most MaxSwarmResult bytes.
func ReadSwarmResult(name string, rd io.Reader) (*SwarmResult, error) {
	var s SwarmResult
	dec := json.NewDecoder(&capReader{r: rd, n: MaxSwarmResult})
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, errSwarmTooLarge) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, fmt.Errorf("%s: not a swarm result: %w", name, err)
	}
	if s.Format != SwarmFormat || s.Version != SwarmVersion {
		return nil, fmt.Errorf("%s: format %q version %d, want %q version %d", name, s.Format, s.Version, SwarmFormat, SwarmVersion)
	}
	switch {
	case s.Members < 1 || s.Member < 1 || s.Member > s.Members:
		return nil, fmt.Errorf("%s: member %d of %d", name, s.Member, s.Members)
	case s.Verdict != checker.Violated.String() && s.Verdict != checker.Unknown.String():
		return nil, fmt.Errorf("%s: verdict %q (a bitstate search is violated or unknown)", name, s.Verdict)
	case s.Sketch == nil:
		return nil, fmt.Errorf("%s: no sketch of the states visited", name)
	case s.Coverage < 0 || s.Coverage > 1 || s.States < 0:
		return nil, fmt.Errorf("%s: coverage %g, states %d out of range", name, s.Coverage, s.States)
	}
	return &s, nil
}

// SwarmVerdict is the merged outcome of a swarm.
type SwarmVerdict struct {
	Verdict checker.Verdict
	Model   string
	Members int // results merged
	Of      int // the swarm's size
	Missing []int
	// Violations are the members that found one, shortest counterexample
	// first (then lowest member).
	Violations []*SwarmResult
	// Union is the estimated number of distinct states the members
	// visited together (from their sketches); Total the estimated number
	// of reachable states, from the members that searched to the end
	// without a depth bound or a budget stopping them (their states ÷
	// their coverage), or 0 if none did; Coverage
	// is Union ÷ Total (at most 1), or -1 when Total is unknown.
	Union, Total, Coverage float64
	Seconds                float64 // the longest member's time
	FirstViolation         float64 // the shortest time of a member that found a violation
}

// MergeSwarm combines the results of one swarm's members: Violated if any
// member found a violation, otherwise Unknown with a combined coverage
// estimate (a bitstate swarm never says Holds). It refuses results of
// different configurations or swarm sizes, and a member given twice.
func MergeSwarm(rs []*SwarmResult) (*SwarmVerdict, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("no swarm results to merge")
	}
	v := &SwarmVerdict{Verdict: checker.Unknown, Model: rs[0].Model, Of: rs[0].Members, Coverage: -1}
	seen := map[int]bool{}
	union := NewSketch()
	for _, r := range rs {
		if r.Model != v.Model {
			return nil, fmt.Errorf("member %d checked %q, member %d %q: results of different models", r.Member, r.Model, rs[0].Member, v.Model)
		}
		if r.Members != v.Of {
			return nil, fmt.Errorf("member %d is of a swarm of %d, member %d of %d", r.Member, r.Members, rs[0].Member, v.Of)
		}
		if seen[r.Member] {
			return nil, fmt.Errorf("member %d given twice", r.Member)
		}
		seen[r.Member] = true
		v.Members++
		union.Merge(r.Sketch)
		v.Seconds = max(v.Seconds, r.Seconds)
		if r.Verdict == checker.Violated.String() {
			v.Verdict = checker.Violated
			v.Violations = append(v.Violations, r)
			if v.FirstViolation == 0 || r.Seconds < v.FirstViolation {
				v.FirstViolation = r.Seconds
			}
		}
		if r.Complete && r.DepthBound == 0 && r.Verdict == checker.Unknown.String() && r.Coverage > 0 {
			v.Total = max(v.Total, float64(r.States)/r.Coverage)
		}
	}
	for i := 1; i <= v.Of; i++ {
		if !seen[i] {
			v.Missing = append(v.Missing, i)
		}
	}
	sort.SliceStable(v.Violations, func(a, b int) bool {
		x, y := v.Violations[a], v.Violations[b]
		if len(x.Steps) != len(y.Steps) {
			return len(x.Steps) < len(y.Steps)
		}
		return x.Member < y.Member
	})
	v.Union = union.Estimate()
	if v.Total > 0 {
		v.Total = max(v.Total, v.Union)
		v.Coverage = min(1, v.Union/v.Total)
	}
	return v, nil
}
