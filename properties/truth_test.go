package properties_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
)

// TestRepollSaysWhatHappened: a retry that re-polls the failed future is
// reported in the user's terms (how the task finished and at which poll,
// the poll that broke the rule, the rule, and Retryable), with repeated
// lines folded; no property it violated is reported as holding. The
// executor is executor.Controllable, so its cases run under the
// controller and a hang is a deadlock the scheduler finds: run as a black
// box on a loaded machine (load 15, the test at nice 19), a worker held
// off its CPU for the idle period made a case end as a hang, reported as
// a lost wake (waker-any-goroutine) beside the real defect.
func TestRepollSaysWhatHappened(t *testing.T) {
	newExec := catalogued(t, "retry-repolls-failed")
	ex := newExec()
	_, ok := ex.(executor.Controllable)
	_ = ex.Close()
	if !ok {
		t.Fatal("retry-repolls-failed is not executor.Controllable: its hangs would be judged by the clock")
	}
	rep := properties.Check(newExec, properties.Config{Checks: 100, ShrinkTime: 300 * time.Millisecond})
	var here *properties.Result
	for _, r := range rep.Results {
		t.Logf("%-22s %s", r.Property.Name, r.State())
		if r.Standing == properties.ReportedHere {
			if here != nil {
				t.Errorf("reported twice: under %s and %s", here.Property.Name, r.Property.Name)
			}
			here = r
		}
		if r.Property.Name == "no-poll-after-ready" && r.Verdict != checker.Violated {
			t.Errorf("no-poll-after-ready: %s, want violated", r.State())
		}
		if r.Standing == properties.Consequence || r.Standing == properties.ReportedElsewhere {
			if here == nil || r.ReportedUnder != here.Property.Name || r.Violating == 0 {
				t.Errorf("%s: %s; want it reported under the failure above", r.Property.Name, r.State())
			}
		}
	}
	if here == nil || here.Caught != "no-poll-after-ready" {
		t.Fatalf("not caught as no-poll-after-ready:\n%s", rep)
	}
	d := here.Detail
	t.Logf("detail:\n%s", d)
	if !regexp.MustCompile(`at poll \d+; poll \d+, on worker \d+, came after that`).MatchString(d) {
		t.Errorf("the detail does not name the poll it finished at and the poll after:\n%s", d)
	}
	for _, want := range []string{"never polled again (TASK-COMPLETE)", "executor.Retryable"} {
		if !strings.Contains(d, want) {
			t.Errorf("the detail does not say %q:\n%s", want, d)
		}
	}
	if !strings.Contains(d, "panicked") && !strings.Contains(d, "finished with an error") {
		t.Errorf("the detail does not say how the task finished:\n%s", d)
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(d, "\n") {
		if seen[l] {
			t.Errorf("line repeated: %q", l)
		}
		seen[l] = true
	}
}

// TestRootCauseLeads: when one case fails several checks, the report
// leads with conformance's first violating event, the earliest departure
// from the model, and lists what the workload saw after it as
// consequences.
func TestRootCauseLeads(t *testing.T) {
	rep := properties.Check(catalogued(t, "double-enqueue"), properties.Config{Checks: 100, ShrinkTime: 300 * time.Millisecond})
	var here []*properties.Result
	for _, r := range rep.Results {
		t.Logf("%-22s %s", r.Property.Name, r.State())
		if r.Standing == properties.ReportedHere {
			here = append(here, r)
		}
	}
	if len(here) == 0 {
		t.Fatalf("double-enqueue not caught:\n%s", rep)
	}
	r := here[0]
	t.Logf("%s", r.Summary(30))
	if r.Caught != "conformance" || len(r.Consequences) == 0 {
		t.Errorf("led by %s with consequences %v; want conformance, the root cause, first and the symptoms after it", r.Caught, r.Consequences)
	}
}

// TestNoSpuriousPollsOption: the option holds an executor that states it
// may poll spuriously to polling only after a wake.
func TestNoSpuriousPollsOption(t *testing.T) {
	mk := func() executor.Executor { return newSliceExec(0, false) }
	rep := properties.Check(mk, properties.Config{Checks: 30, Only: []string{"waker-idempotence"}, NoSpuriousPolls: true, ShrinkTime: 200 * time.Millisecond})
	if rep.Verdict() != checker.Violated {
		t.Fatalf("a busy round robin held to no spurious polls: %v", rep.Verdict())
	}
}
