package check

import (
	"testing"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/cmd/verify/internal/clitest"
)

// The counts of format v1.1 reach both outputs of check: the text summary
// and --json.
func TestCheckV11Counts(t *testing.T) {
	code, out, errs := run(t, "check", td("v11_counts.txt"))
	if code != cli.ExitHolds {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	wantAll(t, "output", out,
		"2 spurious polls",
		"1 wakes through wakers that name no task",
		"error: event 10 (seq 10): task 2 failed (returned an error) on worker 1",
		"the executor stopped at event 17 with every task DONE",
	)
	v, out := clitest.RunJSON[checkJSON](t, verify, cli.ExitHolds, "check", "--json", td("v11_counts.txt"))
	if v.ReportCountsJSON == nil {
		t.Fatalf("no counts: %s", out)
	}
	if c := v.ReportCountsJSON; c.SpuriousPolls != 2 || c.NoTaskWakes != 1 || c.Errors != 1 || c.Panics != 0 || !c.Stopped || c.StopEvent != 17 || len(c.AbandonedAtStop) != 0 {
		t.Errorf("counts %+v", c)
	}
	v, out = clitest.RunJSON[checkJSON](t, verify, cli.ExitHolds, "check", "--json", td("v11_stop_abandoned.txt"))
	if v.ReportCountsJSON == nil {
		t.Fatalf("no counts: %s", out)
	}
	if a := v.AbandonedAtStop; len(a) != 1 || a[0].Task != 2 || a[0].State != "QUEUED" || len(v.NeverCompleted) != 0 {
		t.Errorf("abandoned %+v, never completed %v", a, v.NeverCompleted)
	}
}
