package properties_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
)

// TestFairnessDefaultNoFalseAlarm measures the default fairness bound on
// fair designs that state nothing: busy polling in 10ms slices, a busy
// FIFO round robin, the monitored work-stealing executor with a FIFO owner
// end, the catalogue's two-worker bases as black boxes, and every built-in
// executor (under the controller and as a black
// box; worksteal and monitored, owner LIFO by default, promise no
// fairness and are measured as figures). None may
// fail. It runs only when PROPERTIES_FAIRNESS_LONG gives the number of
// cases per design (the 10ms slices run a tenth of them: each of their
// cases lasts up to a quarter of a second); bench/fairness.sh runs it and
// BENCHMARKS.md has the figures.
func TestFairnessDefaultNoFalseAlarm(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("PROPERTIES_FAIRNESS_LONG"))
	if err != nil || n <= 0 {
		t.Skip("set PROPERTIES_FAIRNESS_LONG to the number of cases per design")
	}
	type design struct {
		name  string
		mk    func() executor.Executor
		cases int
		opts  []properties.Option
	}
	designs := []design{
		{"slice-10ms", func() executor.Executor { return &statesNothing{ex: newSliceExec(10*time.Millisecond, false)} }, max(n/10, 1), nil},
		{"busy-fifo", func() executor.Executor { return &statesNothing{ex: newSliceExec(0, false)} }, n, nil},
		// A monitored work-stealing executor with a FIFO owner end (the
		// default LIFO one starves a task behind a self-waking one, and says
		// so: executor.FairnessPromiser).
		{"monitored-fifo-black-box", func() executor.Executor {
			return &statesNothing{ex: executor.NewMonitored(executor.NewWorkSteal(executor.WorkStealConfig{OwnerFIFO: true}))}
		}, n, nil},
	}
	// The catalogue's two-worker bases state a bound of 300 polls of
	// others; as black boxes, one worker stopped by the operating system
	// can hold a ready task while the other polls its own.
	for _, b := range broken.Bases() {
		if b.Name == "queue-2" || b.Name == "steal-2" {
			designs = append(designs, design{b.Name + "-black-box", b.New, n, []properties.Option{properties.BlackBox()}})
		}
	}
	for _, name := range executor.BuiltinNames() {
		mk, _ := executor.Builtin(name)
		designs = append(designs,
			design{name, mk, n, nil},
			design{name + "-black-box", mk, n, []properties.Option{properties.BlackBox()}})
	}
	for _, d := range designs {
		t.Run(d.name, func(t *testing.T) {
			start := time.Now()
			opts := append([]properties.Option{properties.Checks(d.cases), properties.Only("fairness")}, d.opts...)
			rep := properties.Run(t, d.mk, opts...)
			r := rep.Results[0]
			if r.Verdict != checker.Holds {
				t.Fatalf("false alarm: %v", rep.Err())
			}
			t.Logf("FIGURES %s: %d cases, %d without a verdict, %v; %s", d.name, r.Cases, r.NoVerdict, time.Since(start).Round(time.Second), r.Figures.String())
		})
	}
}

// TestWorkConservationNoFalseAlarm measures the work-conservation check on
// the built-in executors and on customexec's design (sleepyFIFO without
// its bug), under the controller: none may fail. PROPERTIES_FAIRNESS_LONG
// gives the number of cases per executor; bench/fairness.sh runs it.
func TestWorkConservationNoFalseAlarm(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("PROPERTIES_FAIRNESS_LONG"))
	if err != nil || n <= 0 {
		t.Skip("set PROPERTIES_FAIRNESS_LONG to the number of cases per executor")
	}
	mks := map[string]func() executor.Executor{"kit-fifo": func() executor.Executor { return newSleepyFIFO(false) }}
	for _, name := range executor.BuiltinNames() {
		mks[name], _ = executor.Builtin(name)
	}
	for name, mk := range mks {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			rep := properties.Run(t, mk, properties.Checks(n), properties.Only("work-conservation"))
			r := rep.Results[0]
			if r.Verdict != checker.Holds {
				t.Fatalf("false alarm: %v", rep.Err())
			}
			t.Logf("FIGURES work-conservation %s: %d cases, %d without a verdict, %v", name, r.Cases, r.NoVerdict, time.Since(start).Round(time.Second))
		})
	}
}
