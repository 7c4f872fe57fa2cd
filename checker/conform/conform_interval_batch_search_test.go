package conform

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

// searchTrace reads a batch_search_*.txt trace of testdata/conform.
func searchTrace(t *testing.T, name string) (traces.Header, []traces.Event) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "conform", name))
	if err != nil {
		t.Fatal(err)
	}
	return parseTrace(t, string(data))
}

// TestSearchBounds: a search that cannot try every reading it was to try
// (its replays spent, or the trace longer than the events it keeps) gives
// Unknown with the bound named, never a pass nor a violation.
func TestSearchBounds(t *testing.T) {
	for _, tc := range []struct {
		name, trace string
		bound       func(*confSearch)
		limit       string
	}{
		{"replays", "batch_search_lifo_past_half.txt", func(sr *confSearch) { sr.maxRuns = 1 }, "budget"},
		{"replays/sim", "batch_search_fifo_sim_349.txt", func(sr *confSearch) { sr.maxRuns = 0 }, "budget"},
		{"work", "batch_search_fifo_past_half.txt", func(sr *confSearch) { sr.maxWork = 5 }, "budget"},
		{"events", "batch_search_lifo_sim_52.txt", func(sr *confSearch) { sr.maxEvents = 10 }, "keeps 10 events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, evs := searchTrace(t, tc.trace)
			c, err := New(h)
			if err != nil {
				t.Fatal(err)
			}
			tc.bound(c.sr)
			for _, e := range evs {
				if c.Step(e) != nil {
					break
				}
			}
			r := c.Finish()
			if r.Verdict != checker.Unknown || r.Err == nil || !strings.Contains(r.Err.Limit, tc.limit) {
				t.Fatalf("verdict %s, error %v; want unknown, a limit naming %q", r.Verdict, r.Err, tc.limit)
			}
			if !strings.Contains(r.Err.Msg, "no verdict") {
				t.Fatalf("message %q does not say there is no verdict", r.Err.Msg)
			}
		})
	}
}

// TestSearchKeepsEvents: an event the search keeps for its replays comes
// back with every field (each set to a value other than its zero).
func TestSearchKeepsEvents(t *testing.T) {
	var e traces.Event
	v := reflect.ValueOf(&e).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("detail")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(int64(i + 2))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(uint64(i + 2))
		default:
			t.Fatalf("field %s of kind %s: the test sets no value", v.Type().Field(i).Name, f.Kind())
		}
	}
	sr := newConfSearch()
	for i := range confKeptChunk + 2 {
		e.Seq = uint64(i + 1)
		sr.keep(&e)
	}
	for _, i := range []int{0, confKeptChunk + 1} {
		e.Seq = uint64(i + 1)
		if got := sr.kept(i); !reflect.DeepEqual(got, e) {
			t.Fatalf("event %d kept as\n%+v\nnot\n%+v", i, got, e)
		}
	}
}
