package properties_test

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/internal/testenv"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
)

var (
	catalogueOut  = flag.String("properties.catalogue", "", "write the catalogue's detection table (markdown) to this file")
	catalogueIdle = flag.Duration("properties.catalogue-idle", 200*time.Millisecond, "Config.Idle of the catalogue runs: how long without progress is a hang")
)

// TestBasesHold: the correct executors the catalogue varies pass the whole
// suite, under the controller and as black boxes: no false alarm.
func TestBasesHold(t *testing.T) {
	n := 100
	if raceEnabled {
		n = 25
	}
	for _, b := range broken.Bases() {
		t.Run(b.Name+"/controlled", func(t *testing.T) {
			properties.Run(t, b.New, properties.Checks(n))
		})
		t.Run(b.Name+"/black-box", func(t *testing.T) {
			properties.Run(t, b.New, properties.Checks(n), properties.BlackBox())
		})
	}
}

// TestCatalogueCaught: the suite catches every broken executor of the
// catalogue, under the controller (schedules drawn from rapid) and as a
// black box (on the Go scheduler). For each it logs the property that caught
// it, the cases and the time (from the start of the suite) to the first
// failing case, and the size of the shrunk counterexample.
func TestCatalogueCaught(t *testing.T) {
	var tables strings.Builder
	for _, mode := range []struct {
		name     string
		blackBox bool
	}{{"controlled", false}, {"black-box", true}} {
		t.Run(mode.name, func(t *testing.T) {
			table := catalogueTable(t, mode.blackBox)
			fmt.Fprintf(&tables, "### %s\n\n%s\n", mode.name, table)
		})
	}
	t.Log("\n" + tables.String())
	if *catalogueOut != "" {
		if err := os.WriteFile(*catalogueOut, []byte(tables.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func catalogueTable(t *testing.T, blackBox bool) string {
	type row struct {
		name, bug, caught, in string
		cases                 int
		first                 time.Duration
		size                  int
	}
	var rows []row
	for _, b := range broken.Catalogue() {
		t.Run(b.Name, func(t *testing.T) {
			shrink := 500 * time.Millisecond
			if raceEnabled {
				shrink = 200 * time.Millisecond
			}
			rep := properties.Check(b.New, properties.Config{StopAtFirst: true, ShrinkTime: shrink, Idle: *catalogueIdle, Uncontrolled: blackBox})
			if rep.Verdict() != checker.Violated {
				t.Fatalf("%s (%s) was not caught", b.Name, b.Bug)
			}
			for _, r := range rep.Results {
				if r.Verdict != checker.Violated {
					continue
				}
				if r.Counterexample == nil {
					t.Fatalf("%s: a failure without a counterexample: %s", b.Name, r.Output)
				}
				rows = append(rows, row{b.Name, b.Bug, r.Caught, r.Property.Name, r.Cases, r.ToFailure, r.Counterexample.Size()})
				t.Logf("caught by %s in the %s cases: case %d, %v from the start of the suite, shrunk to size %d: %s\n%s",
					r.Caught, r.Property.Name, r.Cases, r.ToFailure.Round(time.Microsecond), r.Counterexample.Size(), r.Detail, r.Counterexample)
			}
		})
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintln(&b, "| broken executor | bug | caught by | in the cases of | cases to first failure | time to first failure | shrunk size |")
	fmt.Fprintln(&b, "|---|---|---|---|---:|---:|---:|")
	times := make([]time.Duration, len(rows))
	for i, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %v | %d |\n", r.name, r.bug, r.caught, r.in, r.cases, r.first.Round(time.Millisecond), r.size)
		times[i] = r.first
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	med := times[len(times)/2]
	if len(times)%2 == 0 {
		med = (times[len(times)/2-1] + times[len(times)/2]) / 2
	}
	fmt.Fprintf(&b, "\n%d of %d caught; median time to first failure %v.\n", len(rows), len(broken.Catalogue()), med.Round(time.Millisecond))
	return b.String()
}

// TestCatalogueDefaults measures what a user sees under plain `go test`:
// the suite with the zero Config on every broken executor, the time to the
// first shrunk failure and to the end of the run. Set EXECSPEC_LONG=1 to
// run it (about a minute); -properties.catalogue writes the table.
func TestCatalogueDefaults(t *testing.T) {
	testenv.OptIn(t, "EXECSPEC_LONG")
	var b strings.Builder
	fmt.Fprintln(&b, "| broken executor | first failure | caught by | time to first shrunk failure | whole run | failures reported | cases masked |")
	fmt.Fprintln(&b, "|---|---|---|---:|---:|---:|---:|")
	for _, e := range append(broken.Catalogue(), broken.Outcomes()...) {
		rep := properties.Check(e.New, properties.Config{})
		var first *properties.Result
		n, masked := 0, 0
		var names []string
		for _, r := range rep.Results {
			masked += r.Masked
			if r.Standing == properties.ReportedHere {
				n++
				names = append(names, r.Caught)
				if first == nil {
					first = r
				}
			}
		}
		if first == nil {
			t.Errorf("%s was not caught", e.Name)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %v | %v | %d (%s) | %d |\n", e.Name, first.Caught, first.Property.Name, first.Done.Round(10*time.Millisecond), rep.Duration.Round(10*time.Millisecond), n, strings.Join(names, ", "), masked)
	}
	t.Log("\n" + b.String())
	if *catalogueOut != "" {
		if err := os.WriteFile(*catalogueOut, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSecondDefectFound: an executor with two independent defects gets two
// failures in one run, each under its own check; the cases that show the
// first defect again are masked, not reported again.
func TestSecondDefectFound(t *testing.T) {
	for _, e := range broken.TwoDefects() {
		n := 100
		if raceEnabled {
			n = 40
		}
		rep := properties.Check(e.New, properties.Config{Checks: n, ShrinkTime: 300 * time.Millisecond})
		got := map[string]bool{}
		masked := 0
		for _, r := range rep.Results {
			if r.Standing == properties.ReportedHere {
				if got[r.Caught] {
					t.Errorf("%s: %s reported twice", e.Name, r.Caught)
				}
				got[r.Caught] = true
			}
			masked += r.Masked
		}
		t.Logf("%s: failures %v, %d cases masked\n%s", e.Name, got, masked, rep)
		if s := rep.String(); !strings.Contains(s, "fairness (fairness): a ready task was starved") || !strings.Contains(s, "violated") {
			t.Errorf("the report does not show the starvation:\n%s", s)
		}
		if !got["fairness"] || len(got) < 2 {
			t.Errorf("%s: want the starvation (fairness) and the duplicate enqueue reported separately, got %v", e.Name, got)
		}
	}
}

// TestOutcomesCaught: the broken executors of the outcome classes are
// caught, each by the check its bug breaks.
func TestOutcomesCaught(t *testing.T) {
	want := map[string]string{"retry-repolls-failed": "no-poll-after-ready"}
	for _, e := range broken.Outcomes() {
		rep := properties.Check(e.New, properties.Config{Checks: 100, StopAtFirst: true, ShrinkTime: 300 * time.Millisecond})
		if rep.Verdict() != checker.Violated {
			t.Errorf("%s (%s) was not caught", e.Name, e.Bug)
			continue
		}
		for _, r := range rep.Results {
			if r.Standing == properties.ReportedHere {
				t.Logf("%s: %s", e.Name, r.Summary(20))
				if r.Caught != want[e.Name] {
					t.Errorf("%s caught by %s, want %s", e.Name, r.Caught, want[e.Name])
				}
			}
		}
	}
}

// stallFIFO is a correct FIFO executor whose worker, at the first poll of
// a case, runs for stall without polling anything: what a worker looks
// like from outside while the operating system has stopped its thread.
type stallFIFO struct {
	*executor.FIFO
	stall time.Duration
	once  sync.Once
}

func (e *stallFIFO) Spawn(f executor.Future) (executor.Handle, error) {
	return e.FIFO.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
		e.once.Do(func() {
			for t0 := time.Now(); time.Since(t0) < e.stall; {
			}
		})
		return f.Poll(cx)
	}))
}

// TestBlackBoxHangWaitsForRunning: a black-box case in which nothing
// happens for the idle time while a goroutine is still running is given a
// second idle period before it is called a hang, so a worker that runs
// late is not reported hung; a hang with every goroutine blocked (the
// catalogue's lost wakes, TestCatalogueCaught) is reported at the first.
func TestBlackBoxHangWaitsForRunning(t *testing.T) {
	idle := 100 * time.Millisecond
	mk := func() executor.Executor { return &stallFIFO{FIFO: executor.NewFIFO(), stall: idle * 3 / 2} }
	rep := properties.Check(mk, properties.Config{Checks: 3, Only: []string{"exactly-once"}, Uncontrolled: true, Idle: idle})
	if rep.Verdict() != checker.Holds {
		t.Fatalf("a worker running late for 1.5 idle periods was reported: %v", rep.Err())
	}
}

// TestBlackBoxHangKeepsStacks: a black-box case that hangs keeps every
// goroutine's stack from the moment the hang was called, so the failure's
// detail shows where the executor's workers wait (here the catalogue's
// lost-wakeup executor, its Scheduler hook hidden: its workers parked with
// a task still to run).
func TestBlackBoxHangKeepsStacks(t *testing.T) {
	var lost func() executor.Executor
	for _, b := range broken.Catalogue() {
		if b.Name == "lost-wakeup" {
			lost = b.New
		}
	}
	blackBox := func() executor.Executor { return struct{ executor.Executor }{lost()} }
	rep := properties.Check(blackBox, properties.Config{Checks: 30, Only: []string{"no-lost-wakeup"}, ShrinkTime: time.Second})
	if rep.Verdict() != checker.Violated {
		t.Fatalf("the lost-wakeup executor as a black box was not caught: %v", rep.Err())
	}
	for _, r := range rep.Results {
		o := r.Observation
		if o == nil || o.End != properties.EndHang {
			continue
		}
		if !strings.HasPrefix(o.HangStacks, "goroutine ") || !strings.Contains(o.HangStacks, "properties/broken.") {
			t.Fatalf("the hung case's stacks do not show the executor's goroutines:\n%.2000s", o.HangStacks)
		}
		return
	}
	t.Fatalf("no result kept a hung case's observation: %v", rep.Err())
}
