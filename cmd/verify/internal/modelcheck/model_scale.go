package modelcheck

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/explore"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// scaleFlags are the flags of `verify model` for large state spaces: the
// compact store, bitstate search and swarm members.
type scaleFlags struct {
	compact    bool
	bitstateMB int64
	swarm      string
	seed       uint64
	depthBound int
	hashes     int
	result     string
}

func (s *scaleFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.compact, "compact", false, "compact state store: about half the bytes per state, somewhat slower")
	fs.Int64Var(&s.bitstateMB, "bitstate", 0, "bitstate search with a Bloom filter of `MB` MiB: a real counterexample or unknown with a coverage estimate, never holds (safety)")
	fs.StringVar(&s.swarm, "swarm", "", "run member `I/N` of a swarm of N diversified bitstate searches and write its result file (merge them with verify merge)")
	fs.Uint64Var(&s.seed, "seed", 0, "base hash seed of a bitstate search or swarm")
	fs.IntVar(&s.depthBound, "depth-bound", 0, "depth bound of a bitstate search (0: none; a swarm varies it)")
	fs.IntVar(&s.hashes, "hashes", 3, "bits set per state in the bitstate filter")
	fs.StringVar(&s.result, "result", "", "swarm result file (default swarm-I-of-N.json in the user's cache directory, execspec/swarm)")
}

// apply sets the options the flags ask for.
func (s *scaleFlags) apply(o *explore.Options) {
	o.Compact = s.compact
}

// search reports whether the flags ask for a bitstate search.
func (s *scaleFlags) search() bool {
	return s.bitstateMB != 0 || s.swarm != "" || s.result != "" || s.depthBound != 0
}

// parseSwarm reads "I/N".
func parseSwarm(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n || n > maxSwarm {
		return 0, 0, fmt.Errorf("--swarm %q: want I/N with 1 ≤ I ≤ N ≤ %d, e.g. 3/8", s, maxSwarm)
	}
	return i, n, nil
}

// runSearch runs a bitstate search or one swarm member.
func runSearch(ctx context.Context, f *modelFlags, cfg model.Config, props []explore.Property, opts explore.Options, stdout, stderr io.Writer) int {
	s := &f.scale
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "verify model: "+format+"\n", a...)
		return cli.ExitUsage
	}
	if len(props) != 1 || props[0] != explore.Safety {
		return usage("--bitstate and --swarm check the safety property only")
	}
	if s.compact {
		return usage("--compact is for the exhaustive search; a bitstate search keeps no states")
	}
	if s.bitstateMB < 0 || s.depthBound < 0 || s.hashes < 1 || s.hashes > 16 {
		return usage("--bitstate and --depth-bound must be at least 0, --hashes between 1 and 16")
	}
	mb := s.bitstateMB
	if mb > 1<<20 {
		return usage(fmt.Sprintf("--bitstate %d: want at most 1048576 (1 TiB)", mb))
	}
	if mb == 0 {
		mb = 64
	}
	b := explore.BitstateOptions{Bytes: mb << 20, Hashes: s.hashes, Seed: s.seed, MaxDepth: s.depthBound}
	i, n := 0, 0
	if s.swarm != "" {
		var err error
		if i, n, err = parseSwarm(s.swarm); err != nil {
			return usage("%v", err)
		}
		if b, err = explore.SwarmMember(i, n, b); err != nil {
			return usage("%v", err)
		}
	} else if s.result != "" {
		return usage("--result is for a swarm member (--swarm I/N)")
	} else if s.bitstateMB == 0 {
		return usage("--depth-bound is for a bitstate search (--bitstate MB or --swarm I/N)")
	}
	opts.MaxBytes = 0 // the filter is the memory
	r, st, err := explore.Bitstate(ctx, cfg, opts, b)
	if err != nil {
		return usage("%v", err)
	}
	if r.Verdict != checker.Violated && !st.Complete {
		// The coverage estimate is the share of the states met that were
		// explored: of a search stopped early it says nothing about the
		// reachable states, so none is claimed.
		why := "stopped"
		if p := strings.Index(r.Message, "%"); p >= 0 {
			if i := strings.Index(r.Message[p:], " ("); i >= 0 {
				why = strings.TrimSuffix(r.Message[p+i+2:], ")")
			}
		}
		r.Message = fmt.Sprintf("no violation found in the %d states searched before the search stopped (%s); how much of the reachable state space that is is unknown", r.States, why)
	}
	files := map[string]string{}
	if r.Verdict == checker.Violated {
		out := f.out
		if n > 0 && out != "" {
			// Members may share --out: each writes its own directory.
			out = filepath.Join(out, fmt.Sprintf("swarm-%d-of-%d", i, n))
		}
		if files, err = writeCounterexample(out, r); err != nil {
			fmt.Fprintf(stderr, "verify model: writing the counterexample: %v\n", err)
		}
	}
	if f.json {
		code := cli.ExitUnknown
		if r.Verdict == checker.Violated {
			code = cli.ExitViolated
		}
		printModelJSON(stdout, code, []modelResultJSON{modelResult(r, files)})
	} else {
		printModelResult(stdout, r, files)
		fmt.Fprintf(stdout, "  bitstate: %d MiB filter, %d hashes, %.2f %% of its bits set, seed %d, depth bound %d, deepest %d\n",
			st.FilterBytes>>20, st.Hashes, 100*st.Fill, b.Seed, b.MaxDepth, st.MaxDepth)
	}
	code := cli.ExitUnknown
	if r.Verdict == checker.Violated {
		code = cli.ExitViolated
	}
	if n > 0 {
		sr := explore.NewSwarmResult(i, n, b, r, st)
		// The options that change what a member checks are part of its
		// configuration: merge refuses to add up members that differ.
		if f.invariants != "all" && f.invariants != "" {
			sr.Model += " invariants=" + f.invariants
		}
		if f.symmetry {
			sr.Model += " symmetry"
		}
		sr.Trace = files["trace"]
		path := s.result
		if path == "" {
			dir, err := cli.DefaultOutDir("swarm")
			if err != nil {
				fmt.Fprintf(stderr, "verify model: writing the swarm result: %v\n", err)
				return cli.ExitUsage
			}
			path = filepath.Join(dir, fmt.Sprintf("swarm-%d-of-%d.json", i, n))
		}
		if err := writeResultFile(path, sr); err != nil {
			fmt.Fprintf(stderr, "verify model: writing the swarm result: %v\n", err)
			return cli.ExitUsage
		}
		if !f.json {
			glob := "FILES…"
			if s.result == "" {
				glob = traces.ShellQuote(filepath.Dir(path)) + string(filepath.Separator) + fmt.Sprintf("swarm-*-of-%d.json", n)
			}
			fmt.Fprintf(stdout, "  swarm member %d of %d: result in %s (combine them with: %s merge %s)\n", i, n, cli.Term(path), cli.SelfCommand(), glob)
		}
	}
	return code
}

// writeResultFile writes v as JSON to path, as every output file is
// written (cli.WriteFile).
func writeResultFile(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return cli.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	})
}
