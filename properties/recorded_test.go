package properties_test

import (
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
	"github.com/execspec/execspec/traces"
)

// TestRecordedChecksCatchLies: the conformance and linearizability
// properties fail on an executor whose trace is wrong, and pass on the same
// executor reporting truthfully.
func TestRecordedChecksCatchLies(t *testing.T) {
	newWS, _ := executor.Builtin("worksteal")
	cases := []struct {
		name, only string
		tamper     func(e traces.Event, r executor.Recorder)
		caught     bool
	}{
		{"truthful", "conformance", func(e traces.Event, r executor.Recorder) { r.Record(e) }, false},
		{"truthful", "linearizability", func(e traces.Event, r executor.Recorder) { r.Record(e) }, false},
		{"take-reported-twice", "conformance", func(e traces.Event, r executor.Recorder) {
			r.Record(e)
			if e.Kind == traces.KindTake {
				e.Seq++
				r.Record(e)
			}
		}, true},
		{"spawn-not-reported", "linearizability", func(e traces.Event, r executor.Recorder) {
			if e.Kind != traces.KindSpawn || e.Task != 2 {
				r.Record(e)
			}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name+"/"+c.only, func(t *testing.T) {
			newEx := func() executor.Executor { return broken.Lying(newWS(), c.tamper) }
			rep := properties.Check(newEx, properties.Config{Only: []string{c.only}, Checks: 50, ShrinkTime: 200e6})
			got := rep.Verdict() == checker.Violated
			if got != c.caught {
				t.Fatalf("violated = %v, want %v: %v\n%s", got, c.caught, rep.Err(), rep.Results[0].Detail)
			}
			if got {
				t.Logf("%v: %s", rep.Err(), rep.Results[0].Detail)
			}
		})
	}
}
