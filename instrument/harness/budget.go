package harness

import (
	"math"
	"testing"
	"time"
)

// ProgressEvery is how often a test with a time budget logs its progress
// (a line that starts with ProgressPrefix, streamed by go test -v, which
// verify test shows on stderr); a budget shorter than four times that
// logs every quarter of it.
const ProgressEvery = 10 * time.Second

// ProgressPrefix starts every progress line a Budget logs.
const ProgressPrefix = "execspec/rt: progress: "

// A Budget is the time budget of one test's runs (Options.Time, verify
// test --time): the test keeps starting runs until it is spent, then
// stops cleanly; a run under way is finished, never cut, so the test ends
// at most one run after the budget. The first run is always made. While
// the runs go on it logs the test's progress every ProgressEvery (every
// quarter of a short budget). A nil
// or zero Budget is never spent and logs nothing. It is used by the
// test's own goroutine.
type Budget struct {
	Time  time.Duration
	start time.Time
	next  time.Time
	every time.Duration
}

// NewBudget returns the Budget of d from now; nil if d is 0.
func NewBudget(d time.Duration) *Budget {
	if d <= 0 {
		return nil
	}
	now, every := time.Now(), min(ProgressEvery, d/4)
	return &Budget{Time: d, start: now, next: now.Add(every), every: every}
}

// Spent reports whether the budget has passed, runs runs having been made
// (the first is always made), and logs the progress on t when it is due.
func (b *Budget) Spent(t testing.TB, runs int) bool {
	if b == nil || b.Time <= 0 {
		return false
	}
	now := time.Now()
	if runs > 0 && now.Sub(b.start) >= b.Time {
		return true // the test's own report says the rest
	}
	if now.After(b.next) {
		b.next = now.Add(b.every)
		unit := time.Second
		if b.every < ProgressEvery {
			unit = 10 * time.Millisecond
		}
		t.Logf("%s%s: %d runs in %v of %v", ProgressPrefix, t.Name(), runs, now.Sub(b.start).Round(unit), b.Time)
	}
	return false
}

// runs is the number of runs a test makes under o: Runs; without it, no
// bound with a Time (the budget ends them), else 100.
func (o Options) runs() int {
	switch {
	case o.Runs > 0:
		return o.Runs
	case o.Time > 0:
		return math.MaxInt
	}
	return 100
}

// Spent reports whether the session's time budget (Options.Time) is
// spent: a suite that makes a case per run starts no more cases. It logs
// the progress when due (Budget).
func (s *Session) Spent() bool {
	if !s.budget.Spent(s.t, s.made) {
		return false
	}
	s.out.TimeUp = true
	return true
}
