package conform_test

import (
	"fmt"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/internal/testenv"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/traces"
)

// TestConformanceControlledLong runs 20,000 controlled schedules of the
// built-in executors (40 seeds of random and PCT scheduling, 50 runs each,
// five configurations) and checks every trace. It takes a few seconds per
// configuration; set EXECSPEC_LONG=1 to run it.
func TestConformanceControlledLong(t *testing.T) {
	testenv.OptIn(t, "EXECSPEC_LONG")
	news := map[string]func() executor.Executor{
		"ws3": func() executor.Executor {
			return executor.NewWorkSteal(executor.WorkStealConfig{Workers: 3, LocalCap: 2, GlobalInterval: 2})
		},
		"wshalf": func() executor.Executor {
			return executor.NewWorkSteal(executor.WorkStealConfig{Workers: 3, LocalCap: 3, StealHalf: true, GlobalInterval: 3})
		},
		"wsslot": func() executor.Executor {
			return executor.NewWorkSteal(executor.WorkStealConfig{Workers: 2, LocalCap: 1, LIFOSlot: true, LIFOMax: 1, GlobalInterval: 2})
		},
		"ts": func() executor.Executor { return executor.NewTimeslice(executor.TimesliceConfig{Workers: 2, Slice: 2}) },
		"wk": func() executor.Executor { return executor.NewWakeable(3) },
	}
	for name, nw := range news {
		bad, rel := 0, 0
		for seed := range uint64(40) {
			for _, s := range []control.Strategy{control.Random(seed), control.NewPCT(3, 0, seed)} {
				c := control.New(s)
				for run := range 50 {
					var log traces.Log
					if err := c.Run(controlled(c, nw, &log)); err != nil {
						t.Fatal(err)
					}
					h := nw().(executor.Describer).Describe()
					cc, _ := conform.New(h)
					ev := log.Events()
					func() {
						defer func() {
							if v := recover(); v != nil {
								keepFailing(t, "panic_"+name, h, ev)
								t.Fatalf("panic %v", v)
							}
						}()
						for _, e := range ev {
							if cc.Step(e) != nil {
								break
							}
						}
					}()
					r := cc.Finish()
					rel += r.Relaxed
					if r.Verdict != checker.Holds {
						bad++
						if bad <= 2 {
							t.Logf("%s seed %d run %d: %s", name, seed, run, r.Summary())
							keepFailing(t, fmt.Sprintf("%s_%d_%d", name, seed, run), h, ev)
						}
					}
				}
			}
		}
		t.Logf("%s: %d of 4000 runs do not conform; %d takes needed the look window", name, bad, rel)
	}
}
