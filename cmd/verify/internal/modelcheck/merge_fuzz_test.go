package modelcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/execspec/execspec/checker/explore"
	"github.com/execspec/execspec/cmd/verify/internal/clitest"
)

// fuzzSwarmResult is a result file as member i of a swarm of 2 writes it.
func fuzzSwarmResult(t testing.TB, i int, verdict string, steps []string, trace string) []byte {
	sk := explore.NewSketch()
	sk.Add([]uint64{uint64(i), 7})
	r := explore.SwarmResult{
		Format: explore.SwarmFormat, Version: explore.SwarmVersion, Model: "W2 T2 K1 fifo",
		Member: i, Members: 2, Seed: 9, Verdict: verdict, States: 40, Transitions: 90, Depth: 12,
		Seconds: 0.5, FilterBytes: 1 << 20, Hashes: 3, Fill: 0.01, Coverage: 0.99, Complete: true,
		Sketch: sk, Steps: steps, Trace: trace,
	}
	if verdict == "violated" {
		r.Property, r.Message = "exactly-once", "task 1 lost"
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// FuzzMergeReader: merge's reader of a result file never panics, reads in
// bounded memory, and refuses what it cannot use with an error that names
// the file; a file it accepts merges with another member, and the verdict
// printed, as text or JSON, is bounded and holds no character that could
// steer a terminal.
func FuzzMergeReader(f *testing.F) {
	f.Add(fuzzSwarmResult(f, 1, "unknown", nil, ""))
	f.Add(fuzzSwarmResult(f, 1, "violated", []string{"SPAWN t1", "POLL-LOCAL w0 t1"}, "a b;$(touch x)\u202e.jsonl"))
	f.Add(bytes.Replace(fuzzSwarmResult(f, 1, "unknown", nil, ""), []byte(`"members":2`), []byte(`"members":2000000000`), 1))
	f.Add(append(fuzzSwarmResult(f, 1, "unknown", nil, ""), fuzzSwarmResult(f, 1, "unknown", nil, "")...))
	f.Add([]byte(`{"format":"execspec-swarm","version":1,"sketch":"` + strings.Repeat("A", 64) + `"}`))
	f.Add([]byte(`{"states":1e400}`))
	other, err := readSwarmResult("other.json", bytes.NewReader(fuzzSwarmResult(f, 2, "unknown", nil, "")))
	if err != nil {
		f.Fatalf("the second member is refused: %v", err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := readSwarmResult("fuzz.json", bytes.NewReader(data))
		var out bytes.Buffer
		if err == nil {
			set := swarmSet{files: map[int]string{}}
			if err = set.add("fuzz.json", r); err == nil {
				err = set.add("other.json", other)
			}
			rs := []*explore.SwarmResult{r}
			if err == nil {
				rs = append(rs, other)
			}
			v, merr := explore.MergeSwarm(rs)
			if merr != nil {
				t.Fatalf("accepted alone, but cannot be merged alone: %v", merr)
			}
			printMerge(&out, v)
			printMergeJSON(&out, v)
		} else if msg := err.Error(); !strings.HasPrefix(msg, "fuzz.json") || len(msg) == len("fuzz.json: ") {
			t.Fatalf("error %q does not name the file and say what is wrong", msg)
		}
		runtime.ReadMemStats(&after)
		// The sketch (16 KiB) and its merge, the decoded JSON (a few
		// times the input) and the verdict printed: never more.
		if used := after.TotalAlloc - before.TotalAlloc; used > 4<<20+64*uint64(len(data)) {
			t.Fatalf("%d bytes allocated for an input of %d", used, len(data))
		}
		if out.Len() > 64<<10+8*len(data) {
			t.Fatalf("printed %d bytes for an input of %d", out.Len(), len(data))
		}
		for i, line := range strings.Split(out.String(), "\n") {
			if !utf8.ValidString(line) {
				t.Fatalf("line %d is not UTF-8: %q", i+1, line)
			}
			for _, c := range line {
				if unicode.IsControl(c) || unicode.Is(unicode.Cf, c) || c == '\u2028' || c == '\u2029' {
					t.Fatalf("line %d holds %U: %q", i+1, c, line)
				}
			}
		}
	})
}

// FuzzModelFlags: parsing and validating the flags of verify model never
// panics, and whatever validation accepts lies in the documented ranges.
func FuzzModelFlags(f *testing.F) {
	clitest.FuzzFlags(f, func(args []string) string {
		var m modelFlags
		fs := modelFlagSet(io.Discard, &m)
		if fs.Parse(args) != nil || checkModelFlags(fs, &m) != nil {
			return ""
		}
		switch {
		case m.parallel < 0 || m.parallel > maxParallel || m.maxStates < 0 || m.maxMemMiB < 0 || m.timeout < 0 || m.cfg.Wakes < 1:
			return fmt.Sprintf("%+v", m)
		case m.property == "fairness" && !m.cfg.Endless:
			return "fairness without --endless"
		}
		m.resolve() // must not panic either
		return ""
	}, "--local-cap 0", "--parallel 1000000", "--policy fifo --steal-half", "--property fairness", "--max-memory -1 --timeout -1s")
}
