package properties_test

import (
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
)

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
