package traces

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzHeader: the JSON header parser never panics; a header it accepts
// passes CheckHeader, is valid UTF-8 with no repeated key, and reads back
// the same after encoding.
func FuzzHeader(f *testing.F) {
	for _, s := range []string{
		`{"format":"execspec-trace","version":1,"executor":"x","workers":2,"policy":"fifo"}`,
		`{"format":"execspec-trace","version":1,"workers":2,"workers":100}`,
		`{"format":"execspec-trace","version":1,"workers":2,"executor":null}`,
		`{"format":"execspec-trace","version":1,"workers":2,"config":{"local-cap":null,"a":1,"a":2}}`,
		"{\"format\":\"execspec-trace\",\"version\":1,\"workers\":2,\"executor\":\"\xff\"}",
		`{"format":"execspec-trace","version":1,"workers":16777216}`,
		`{"format":"execspec-trace","version":1,"workers":2,"minor":1,"order":"intervals","unobserved":["take","queue","outcome"],"config":{"spurious-polls":1,"slice-us":50}}`,
		`{"format":"execspec-trace","version":1,"workers":2,"order":"seq"}`,
		`{"format":"execspec-trace","version":1,"workers":2,"minor":1,"unobserved":["park","park"]}`,
		`{"format":"execspec-trace","version":1,"workers":2,"minor":1.0,"unobserved":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		h, err := parseHeader(line, false)
		if err != nil {
			return
		}
		if err := CheckHeader(h); err != nil {
			t.Fatalf("accepted a header CheckHeader rejects: %v", err)
		}
		if !utf8.Valid(line) {
			t.Fatal("accepted invalid UTF-8")
		}
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		h2, err := parseHeader(b, false)
		if err != nil {
			t.Fatalf("its own encoding %s is rejected: %v", b, err)
		}
		if h2.Executor != h.Executor || h2.Workers != h.Workers || h2.Policy != h.Policy || len(h2.Config) != len(h.Config) ||
			h2.Minor != h.Minor || h2.Order != h.Order || strings.Join(h2.Unobserved, ",") != strings.Join(h.Unobserved, ",") {
			t.Fatalf("read back %+v, want %+v", h2, h)
		}
	})
}
