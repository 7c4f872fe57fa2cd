package properties_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
)

// brokenCall wraps a correct executor and breaks one of its methods.
type brokenCall struct {
	executor.Executor
	spawn, wait, close func()
}

func (b *brokenCall) Spawn(f executor.Future) (executor.Handle, error) {
	if b.spawn != nil {
		b.spawn()
	}
	return b.Executor.Spawn(f)
}

func (b *brokenCall) Wait() error {
	if b.wait != nil {
		b.wait()
	}
	return b.Executor.Wait()
}

func (b *brokenCall) Close() error {
	if b.close != nil {
		b.close()
	}
	return b.Executor.Close()
}

// An executor whose Spawn, Wait or Close panics fails the suite with that
// panic named; the test binary does not crash.
func TestExecutorPanicIsAFailure(t *testing.T) {
	boom := func() { panic("boom") }
	for _, c := range []struct {
		name string
		make func() *brokenCall
	}{
		{"Spawn", func() *brokenCall { return &brokenCall{spawn: boom} }},
		{"Wait", func() *brokenCall { return &brokenCall{wait: boom} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := properties.Check(func() executor.Executor {
				b := c.make()
				b.Executor = broken.NewQueue(broken.QueueConfig{Workers: 1})
				return b
			}, properties.Config{Checks: 3, Only: []string{"exactly-once"}, ShrinkTime: 1})
			if rep.Verdict() != checker.Violated {
				t.Fatalf("verdict %v, want violated\n%v", rep.Verdict(), rep)
			}
			if d := rep.Results[0].Detail; !strings.Contains(d, c.name+" panicked: boom") {
				t.Errorf("the failure does not name the panic: %s", d)
			}
		})
	}
}

// A constructor that is nil, returns nil or panics, and an executor whose
// Close panics, are a clear failure of the run, not a crash.
func TestBrokenConstructorIsAFailure(t *testing.T) {
	var nilQueue *brokenCall
	for _, c := range []struct {
		name string
		new  func() executor.Executor
		want string
	}{
		{"nil constructor", nil, "constructor is nil"},
		{"returns nil", func() executor.Executor { return nil }, "returned nil"},
		{"returns a nil pointer", func() executor.Executor { return nilQueue }, "returned a nil *properties_test.brokenCall"},
		{"panics", func() executor.Executor { panic("no executor today") }, "constructor panicked: no executor today"},
		{"Close panics", func() executor.Executor {
			return &brokenCall{Executor: broken.NewQueue(broken.QueueConfig{Workers: 1}), close: func() { panic("close") }}
		}, "Close panicked: close"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := properties.Check(c.new, properties.Config{Checks: 2, Only: []string{"exactly-once"}})
			if rep.Verdict() != checker.Violated {
				t.Fatalf("verdict %v, want violated", rep.Verdict())
			}
			if err := rep.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// properties.Run(t, nil) fails the test with a message; it does not crash
// the test binary. (Run in a child process: the failure is the point.)
func TestRunNilConstructor(t *testing.T) {
	if os.Getenv("EXECSPEC_RUN_NIL") == "1" {
		properties.Run(t, nil)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunNilConstructor$")
	cmd.Env = append(os.Environ(), "EXECSPEC_RUN_NIL=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child passed:\n%s", out)
	}
	if strings.Contains(string(out), "panic:") || !strings.Contains(string(out), "the executor constructor is nil") {
		t.Errorf("the child did not fail with a message:\n%s", out)
	}
}

// A selection that checks nothing, or a count out of range, is refused,
// never "holds"; a run where every selected property is skipped is
// unknown.
func TestNothingCheckedIsNotHolds(t *testing.T) {
	var all []string
	for _, p := range properties.Properties() {
		all = append(all, p.Name)
	}
	mk := func() executor.Executor { return broken.NewQueue(broken.QueueConfig{Workers: 1}) }
	for _, cfg := range []properties.Config{
		{Skip: all},
		{Skip: []string{"exactly-once"}, Only: []string{"exactly-once"}},
		{Cases: []string{"fairness"}, Only: []string{"exactly-once"}},
		{Checks: -5},
		{PCTDepth: 1_000_000_000},
	} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
		if v := properties.Check(mk, cfg).Verdict(); v == checker.Holds {
			t.Errorf("%+v: verdict holds", cfg)
		}
	}
	rep := &properties.Report{Results: []*properties.Result{{Skipped: "does not apply", Verdict: checker.Unknown}}}
	if v := rep.Verdict(); v != checker.Unknown {
		t.Errorf("every property skipped: verdict %v, want unknown", v)
	}
}
