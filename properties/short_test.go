package properties

import (
	"flag"
	"testing"

	"github.com/execspec/execspec/executor"
)

// Under -short, a count of cases the caller set is still run (rapid alone
// would run a fifth of it, rounded down: none below 5, and every property
// would hold on no case).
func TestShortKeepsTheCallersChecks(t *testing.T) {
	f := flag.Lookup("test.short")
	old := f.Value.String()
	if err := f.Value.Set("true"); err != nil {
		t.Fatal(err)
	}
	defer f.Value.Set(old)
	rep := Check(func() executor.Executor { return executor.NewFIFO() }, Config{Checks: 2, Cases: []string{"exactly-once"}})
	if len(rep.Results) == 0 {
		t.Fatal("no result")
	}
	for _, r := range rep.Results {
		if r.Cases != 2 {
			t.Errorf("%s: %d cases under -short, want the 2 asked for", r.Property.Name, r.Cases)
		}
	}
}
