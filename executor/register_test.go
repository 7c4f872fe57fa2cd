package executor_test

import (
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/traces"
)

// registerWorkload spawns n tasks that each register once (Context.Register)
// and are woken by a goroutine started with goFn, then complete.
func registerWorkload(ex executor.Executor, n int, goFn func(func())) {
	for range n {
		polls := 0
		_, _ = ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
			polls++
			if polls == 1 {
				w := cx.Waker()
				goFn(w.Wake)
				cx.Register()
				return nil, false
			}
			return nil, true
		}))
	}
}

// Every built-in executor records a register event per Register, before
// the poll's end, and the trace conforms.
func TestRegisterEventConforms(t *testing.T) {
	for _, name := range executor.BuiltinNames() {
		mk, _ := executor.Builtin(name)
		ex := mk()
		rp, ok := ex.(executor.Reporter)
		if !ok {
			continue
		}
		var log traces.Log
		rp.SetRecorder(&log)
		registerWorkload(ex, 20, func(f func()) { go f() })
		if err := ex.Close(); err != nil {
			t.Fatal(err)
		}
		ev := log.Events()
		regs := 0
		for _, e := range ev {
			if e.Kind == traces.KindRegister {
				regs++
			}
		}
		if regs != 20 {
			t.Errorf("%s: %d register events, want 20", name, regs)
		}
		h := ex.(executor.Describer).Describe()
		r, err := conform.Check(h, traces.All(ev))
		if err != nil || r.Verdict != checker.Holds {
			t.Errorf("%s: %v %s", name, err, r.Summary())
		}
	}
}

// Under control, a wake can land between the registration and the
// Pending return (PointRegister): the task is NOTIFIED, and re-queued.
func TestRegisterYieldLetsAWakeIn(t *testing.T) {
	c := control.New(control.Random(3))
	for run := range 300 {
		var log traces.Log
		err := c.Run(func() {
			ex := executor.NewWorkSteal(executor.WorkStealConfig{Workers: 2})
			ex.SetScheduler(c)
			ex.SetRecorder(c.Recorder(&log))
			registerWorkload(ex, 2, c.Go)
			_ = ex.Close()
		})
		if err != nil {
			t.Fatal(err)
		}
		ev := log.Events()
		for i, e := range ev {
			if e.Kind == traces.KindWake && e.Outcome == traces.OutcomeNotified {
				for _, p := range ev[:i] {
					if p.Kind == traces.KindRegister && p.Task == e.Task {
						t.Logf("run %d: a wake landed after the registration, during the poll", run)
						return
					}
				}
			}
		}
	}
	t.Fatal("no wake ever landed between a registration and its poll's end")
}
