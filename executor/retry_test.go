package executor_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/execspec/execspec/executor"
)

// flaky fails (Ready with executor.Failed) until its attempt number
// reaches succeedAt; a finished attempt must never be polled again.
type flaky struct {
	attempts  *atomic.Int32
	succeedAt int32
	attempt   int32
	finished  bool
	t         *testing.T
}

var errFlaky = errors.New("flaky")

func (f *flaky) Poll(cx *executor.Context) (any, bool) {
	if f.finished {
		f.t.Errorf("attempt %d polled after it finished", f.attempt)
	}
	f.finished = true
	if f.attempt < f.succeedAt {
		return executor.Failed{Err: errFlaky}, true
	}
	return "ok", true
}

func (f *flaky) Fresh() executor.Future {
	return &flaky{attempts: f.attempts, succeedAt: f.succeedAt, attempt: f.attempts.Add(1), t: f.t}
}

// TestRetrySpawnRetries: a Retryable future spawned with plain Spawn is
// retried from fresh futures, never by re-polling the failed one, and the
// retries stop at the executor's limit.
func TestRetrySpawnRetries(t *testing.T) {
	for _, c := range []struct {
		succeedAt int32
		wantErr   bool
	}{{1, false}, {2, false}, {3, true}} {
		e := executor.NewRetry(executor.RetryConfig{Retries: 2})
		var n atomic.Int32
		h, err := e.Spawn(&flaky{attempts: &n, succeedAt: c.succeedAt, t: t})
		if err != nil {
			t.Fatal(err)
		}
		v, err := h.Join()
		if c.wantErr {
			if !errors.Is(err, errFlaky) {
				t.Errorf("succeedAt %d: Join = (%v, %v), want the error after 2 retries", c.succeedAt, v, err)
			}
		} else if err != nil || v != "ok" {
			t.Errorf("succeedAt %d: Join = (%v, %v), want ok", c.succeedAt, v, err)
		}
		if got, want := n.Load(), min(c.succeedAt, 2); got != want {
			t.Errorf("succeedAt %d: %d fresh futures made, want %d", c.succeedAt, got, want)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
