package ownexec_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/execspec/execspec/examples/ownexec"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
)

// TestSuite: the executor passes every property of the suite (black box:
// its own locks are not the Kit's).
func TestSuite(t *testing.T) {
	properties.Run(t, func() executor.Executor { return ownexec.New(2) })
}

// TestJoinOutcomes: Join returns the value, a *PanicError for a panic, a
// *FailedError for a Failed value, and ErrWaitInTask from inside a task.
func TestJoinOutcomes(t *testing.T) {
	ex := ownexec.New(2)
	defer ex.Close()
	val, _ := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { return 7, true }))
	pan, _ := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { panic("boom") }))
	boom := errors.New("boom")
	fail, _ := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { return executor.Failed{Err: boom}, true }))
	inside, _ := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { _, err := val.Join(); return err, true }))
	if v, err := val.Join(); v != 7 || err != nil {
		t.Errorf("value: %v, %v", v, err)
	}
	var pe *executor.PanicError
	if _, err := pan.Join(); !errors.As(err, &pe) || pe.Value != "boom" {
		t.Errorf("panic: %v", err)
	}
	var fe *executor.FailedError
	if _, err := fail.Join(); !errors.As(err, &fe) || !errors.Is(err, boom) {
		t.Errorf("failed: %v", err)
	}
	if v, _ := inside.Join(); v != executor.ErrWaitInTask {
		t.Errorf("Join inside a task returned %v, want ErrWaitInTask", v)
	}
}

// TestGlueLines: the executor, glue and all, stays within the promise.
func TestGlueLines(t *testing.T) {
	src, err := os.ReadFile("ownexec.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "\n"); n > 140 {
		t.Errorf("ownexec.go has %d lines", n)
	}
}
