// Package recorded runs a workload on an executor that reports its events
// and returns the trace, for the tests that check what the built-in
// executors record (checker/conform, checker/lin):
//
//	h, events := recorded.Run(t, ex, func() error { spawnAll(ex); return ex.Wait() })
package recorded

import (
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// Timeout is how long Run waits for a workload to end.
const Timeout = 20 * time.Second

// Run runs workload on ex with a traces.Log as its recorder, closes ex,
// and returns its header and the events recorded. It fails t when ex
// reports no events (every built-in executor does: one that stopped would
// otherwise drop out of the check unseen), or when the workload fails or
// does not end within Timeout. workload runs on a goroutine of its own: it
// returns its failure rather than calling t.Fatal.
func Run(t testing.TB, ex executor.Executor, workload func() error) (traces.Header, []traces.Event) {
	t.Helper()
	rep, ok := ex.(executor.Reporter)
	if !ok {
		t.Fatalf("%T does not report events (executor.Reporter)", ex)
	}
	var rec traces.Log
	rep.SetRecorder(&rec)
	errc := make(chan error, 1)
	go func() { errc <- workload() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(Timeout):
		t.Fatalf("the workload did not end in %v", Timeout)
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	var h traces.Header
	if d, ok := ex.(executor.Describer); ok {
		h = d.Describe()
	}
	return h, rec.Events()
}
