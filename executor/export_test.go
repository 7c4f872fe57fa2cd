package executor

// Deliberately broken variants of built-in executors, for the tests of
// package executor_test that check their traces with the checker. Each
// records honestly what it does, under the header of the correct executor.

// NewBrokenPriority returns a Priority executor with one bug; its header
// still declares the aging it was configured with:
//   - "no-aging": the queue never ages a task (a low-priority task waits
//     as long as higher ones come);
//   - "ties-lifo": among tasks of the highest priority the last queued
//     runs first.
func NewBrokenPriority(c PriorityConfig, bug string) *Priority {
	e := NewPriority(c)
	switch bug {
	case "no-aging":
		e.q = &prioq{}
	case "ties-lifo":
		e.q = &tiesLIFO{aging: int64(e.aging)}
	default:
		panic("unknown bug " + bug)
	}
	return e
}

// NewBrokenRetry returns a Retry executor that retries a failed task by
// polling its finished future again, instead of a fresh one.
func NewBrokenRetry(c RetryConfig) *Retry {
	e := NewRetry(c)
	e.refresh = func(*task) bool { return true }
	return e
}

// tiesLIFO is the priority policy with aging, but among equal priorities
// the last pushed wins: a linear scan, for tests.
type tiesLIFO struct {
	aging, takes int64
	q            []queuedAt
}

type queuedAt struct {
	t     *task
	takes int64
}

func (l *tiesLIFO) push(t *task) { l.q = append(l.q, queuedAt{t, l.takes}) }

func (l *tiesLIFO) pop() *task {
	if len(l.q) == 0 {
		return nil
	}
	pick := 0
	if l.aging == 0 || l.takes-l.q[0].takes < l.aging {
		for i, x := range l.q {
			if x.t.key >= l.q[pick].t.key {
				pick = i
			}
		}
	}
	l.takes++
	t := l.q[pick].t
	l.q = append(l.q[:pick], l.q[pick+1:]...)
	return t
}
