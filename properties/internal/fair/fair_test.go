package fair

import (
	"strings"
	"testing"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// bounded states a fairness bound in polls and its workers.
type bounded struct {
	executor.Executor
	workers, bound int
}

func (b bounded) FairnessBound(int) int                          { return b.bound }
func (b bounded) Describe() traces.Header                        { return traces.Header{Workers: b.workers} }
func (b bounded) PromisesFairness() bool                         { return true }
func (b bounded) Spawn(executor.Future) (executor.Handle, error) { return nil, executor.ErrClosed }

// A controlled case (no clock) of one worker that states a bound of 3:
// a ready task polled after 3 + 2 polls of others holds, after 6 fails
// with the bound named; the figures keep the most.
func TestPolledAgainstTheBound(t *testing.T) {
	for _, c := range []struct {
		others int
		fails  bool
	}{{5, false}, {6, true}} {
		m := &Meter{Bound: -1, Controlled: true}
		m.Set(bounded{workers: 1, bound: 3}, 2, 0, 0)
		if m.Mode != Polls || m.Bound != 3 {
			t.Fatalf("mode %v bound %d, want polls 3", m.Mode, m.Bound)
		}
		var rd Ready
		m.Mark(&rd, 0)
		for range c.others {
			m.Saw(0)
			m.Ended(0)
		}
		got := m.Polled(1, 2, &rd, int64(c.others)+1)
		if (got != "") != c.fails || c.fails && !strings.Contains(got, "states a bound of 3") {
			t.Errorf("%d polls of others: %q", c.others, got)
		}
		if m.MaxDelay.Load() != int64(c.others) {
			t.Errorf("MaxDelay %d, want %d", m.MaxDelay.Load(), c.others)
		}
	}
}

// A ready task held by a worker that ended no poll since does not count
// against the executor, however many the other worker ended.
func TestHeldByTheLeastBusyWorker(t *testing.T) {
	m := &Meter{Bound: -1, Controlled: true}
	m.Set(bounded{workers: 2, bound: 1}, 2, 0, 0)
	m.Saw(0)
	m.Saw(1)
	var rd Ready
	m.Mark(&rd, 2)
	for range 50 {
		m.Ended(1)
	}
	if got := m.Polled(1, 2, &rd, 53); got != "" {
		t.Errorf("held by a stopped worker: %q", got)
	}
}
