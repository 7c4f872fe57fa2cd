package properties

import (
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
)

// stuckClose is an executor whose Close never returns.
type stuckClose struct{ executor.Executor }

func (stuckClose) Close() error { select {} }

// A fresh executor whose Close never returns fails the run after
// probeClose instead of hanging it.
func TestCloseNeverReturns(t *testing.T) {
	defer func(d time.Duration) { probeClose = d }(probeClose)
	probeClose = 50 * time.Millisecond
	done := make(chan *Report, 1)
	go func() {
		done <- Check(func() executor.Executor { return stuckClose{} }, Config{Checks: 1, Only: []string{checkExactlyOnce}})
	}()
	select {
	case rep := <-done:
		if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "did not return within") {
			t.Errorf("got %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Check hangs on a Close that never returns")
	}
}
