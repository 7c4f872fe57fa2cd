package harness

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/instrument/rt/rtstd"
)

// passes is a program that every schedule runs to the end.
func passes() {
	var wg rtstd.WaitGroup
	wg.Add(1)
	rt.Go(wg.Done)
	wg.Wait()
}

// logTB keeps what a Budget logs.
type logTB struct {
	testing.TB
	lines []string
}

func (l *logTB) Logf(format string, args ...any) {
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// A Budget is spent once its time has passed, never before the first
// run, and logs the progress every quarter of a short budget (virtual
// time: the bubble's clock).
func TestBudgetSpentAndProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(2 * time.Second)
		l := &logTB{TB: t}
		runs := 0
		for !b.Spent(l, runs) {
			time.Sleep(100 * time.Millisecond)
			runs++
		}
		if runs != 20 {
			t.Errorf("spent after %d runs of 100ms, want 20", runs)
		}
		if len(l.lines) != 3 || !strings.HasPrefix(l.lines[0], ProgressPrefix) || !strings.Contains(l.lines[2], "18 runs in 1.8s of 2s") {
			t.Errorf("progress %q: want 3 lines, every 500ms", l.lines)
		}
		// The first run is always made, however small the budget.
		if b := NewBudget(time.Nanosecond); func() bool { time.Sleep(time.Second); return b.Spent(l, 0) }() {
			t.Error("a budget spent before the first run")
		}
		var none *Budget
		if NewBudget(0) != nil || none.Spent(l, 1<<30) {
			t.Error("no budget is never spent")
		}
	})
}

// TestWith with a Time and no Runs keeps starting runs until the budget
// is spent, and its Outcome says so; Runs given with it bound the runs.
func TestWithTimeBudget(t *testing.T) {
	dir := t.TempDir()
	outcome := func(name string, o Options) Outcome {
		t.Helper()
		o.Report = filepath.Join(dir, name+".jsonl")
		t.Run(name, func(t *testing.T) { TestWith(t, o, func(*testing.T) { passes() }) })
		outs, err := ReadReport(o.Report)
		if err != nil || len(outs) != 1 {
			t.Fatalf("%s: outcomes %+v, %v", name, outs, err)
		}
		return outs[0]
	}
	start := time.Now()
	o := outcome("budget", Options{Time: 300 * time.Millisecond})
	if took := time.Since(start); !o.TimeUp || o.FailedRun != 0 || o.Runs < 2 || took < 300*time.Millisecond {
		t.Errorf("--time 300ms: %+v in %v", o, took)
	}
	if o := outcome("bounded", Options{Time: time.Hour, Runs: 3}); o.TimeUp || o.Runs != 3 {
		t.Errorf("--time 1h --runs 3: %+v", o)
	}
}

// A Session with a Time has no bound in runs; Spent ends its loop and
// its Outcome says the budget stopped it.
func TestSessionTimeBudget(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.jsonl")
	t.Run("session", func(t *testing.T) {
		s, err := NewSession(t, Options{Time: 200 * time.Millisecond, Report: report})
		if err != nil {
			t.Fatal(err)
		}
		if s.Runs() != math.MaxInt {
			t.Fatalf("runs %d with a budget alone, want no bound", s.Runs())
		}
		for range s.Runs() {
			if s.Spent() {
				break
			}
			if _, err := s.Run(passes); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
	outs, err := ReadReport(report)
	if err != nil || len(outs) != 1 || !outs[0].TimeUp || outs[0].Runs < 2 {
		t.Fatalf("outcomes %+v, %v", outs, err)
	}
}

func TestOptionsFromEnvTime(t *testing.T) {
	t.Setenv(EnvTime, "1m30s")
	if o, err := OptionsFromEnv(); err != nil || o.Time != 90*time.Second {
		t.Errorf("%s=1m30s: %v, %v", EnvTime, o.Time, err)
	}
	for _, bad := range []string{"soon", "-1s", "10"} {
		t.Setenv(EnvTime, bad)
		if _, err := OptionsFromEnv(); err == nil || !strings.Contains(err.Error(), EnvTime) {
			t.Errorf("%s=%s: %v, want an error naming the variable", EnvTime, bad, err)
		}
	}
}
