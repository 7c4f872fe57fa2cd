package broken

import "github.com/execspec/execspec/executor"

// Outcomes returns the broken executors of the outcome classes: how an
// executor handles a future that finished with an error (a Ready
// executor.Failed value) or a panic. Each is a correct FIFO executor on
// executor.Kit with one bug. The suite must catch every one.
func Outcomes() []Executor {
	return []Executor{
		{"retry-repolls-failed", "a task that finished with an error is retried by polling the same, finished future again instead of a fresh one", "kit fifo w=1",
			func() executor.Executor {
				return newKitFIFO(1, func(f executor.Future) executor.Future { return &repollOnError{f: f} })
			}},
	}
}

// repollOnError is the bug: a future that returned Ready with a Failed
// value is polled again, up to twice, as a retry that reuses the future.
type repollOnError struct{ f executor.Future }

func (r *repollOnError) Poll(cx *executor.Context) (any, bool) {
	v, ready := r.f.Poll(cx)
	for i := 0; i < 2 && ready; i++ {
		if _, failed := v.(executor.Failed); !failed {
			break
		}
		v, ready = r.f.Poll(cx)
	}
	return v, ready
}
