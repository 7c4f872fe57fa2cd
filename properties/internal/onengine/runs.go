package onengine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/instrument/harness"
	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/internal/guard"
	"github.com/execspec/execspec/properties/internal/rapidrun"
)

// ControlsGoroutines runs one task on a fresh executor under the engine
// and reports whether the executor started a controlled goroutine (its go
// statements were rewritten). An executor that runs its tasks on the
// caller's goroutine starts none and has nothing to interleave either.
func ControlsGoroutines(t *testing.T, newExecutor func() executor.Executor) bool {
	started := 0
	_, _ = rt.Run(t, rt.Config{MaxSteps: Steps}, func(*testing.T) {
		ex, err := guard.Fresh(newExecutor)
		if err != nil {
			return
		}
		before := rt.Goroutines()
		_ = guard.Call("Spawn", func() error {
			_, err := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { return nil, true }))
			return err
		})
		_ = guard.Call("Wait", ex.Wait)
		_ = guard.Call("Close", ex.Close)
		started = rt.Goroutines() - before
	})
	return started > 0
}

// Unbounded is rapid's -rapid.checks under verify test's --time alone,
// where the cases are not bounded: rapid's loop multiplies it by 10 for
// invalid cases, so it stays far below the largest int (of 32 bits too).
const Unbounded = min(1<<40, math.MaxInt/100)

// Replay is the command that replays a failure found on the engine, in
// the test (a -test.run pattern) run, from rapid's failfile: verify
// test's own command (with %s for the failfile, from EXECSPEC_*), or the
// go test line with the schedule's environment variable when it has none.
func Replay(command, run, failfile string) string {
	// rapid names the failfile from the test binary's directory (the
	// package's); verify test is run from anywhere.
	if abs, err := filepath.Abs(failfile); err == nil {
		failfile = abs
	}
	if command == "" {
		return fmt.Sprintf("%s=%s go test -run '%s' (with the overlay verify test builds)", harness.EnvSchedule, failfile, run)
	}
	return strings.ReplaceAll(command, "%s", failfile) + " --run '" + run + "'"
}

// Record appends out to verify test's report file (a JSON line, as
// harness.Test writes one per test).
func Record(report string, out harness.Outcome) error {
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(report, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return errors.Join(err, f.Close())
}

// Note is the file beside a failfile written on the engine: what the
// strategy was, so that a replay draws the schedule the same way.
type Note struct {
	PCTDepth int    `json:"pct_depth,omitempty"` // 0: the choices were drawn one by one (RapidChooser)
	Checksum string `json:"checksum,omitempty"`  // of the failing run: a replay must reproduce it
}

const noteSuffix = ".engine.json"

// WriteNote writes n beside failfile.
func WriteNote(failfile string, n Note) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return rapidrun.WriteNew(failfile+noteSuffix, string(b)+"\n")
}

// ReadNote reads the note beside failfile.
func ReadNote(failfile string) (Note, error) {
	var n Note
	b, err := os.ReadFile(failfile + noteSuffix)
	if err != nil {
		return n, fmt.Errorf("properties: replaying %s: %w (written beside the failfile with the failure: it says which strategy drew the schedule)", failfile, err)
	}
	if err := json.Unmarshal(b, &n); err != nil {
		return n, fmt.Errorf("properties: %s%s: %v", failfile, noteSuffix, err)
	}
	return n, nil
}
