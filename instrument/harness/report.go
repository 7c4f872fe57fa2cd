package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control/sched"
)

// Outcome is the record of one test under control, written as a JSON
// line to Options.Report.
type Outcome struct {
	Test      string  `json:"test"`
	Strategy  string  `json:"strategy"`
	Runs      int     `json:"runs"`                 // runs made (the failing one included)
	FailedRun int     `json:"failed_run,omitempty"` // 1-based; 0: none failed
	Kind      string  `json:"kind,omitempty"`       // deadlock, leak, panic, fail, budget, diverged, os.Exit
	Error     string  `json:"error,omitempty"`
	Schedule  string  `json:"schedule,omitempty"`
	Steps     int     `json:"steps"`
	Checksum  string  `json:"checksum,omitempty"`
	Replayed  bool    `json:"replayed,omitempty"` // a replay matched its schedule's checksum
	Seconds   float64 `json:"seconds"`            // wall-clock time of the runs
	TimeUp    bool    `json:"time_up,omitempty"`  // the runs stopped because Options.Time was spent
	// Early, for a failed run that let virtual time pass while a
	// goroutine could run (early timers), says how much and while which
	// goroutines, in one line.
	Early string `json:"early,omitempty"`

	// TotalSteps counts the yield points of every run made (a Session's).
	TotalSteps int `json:"total_steps,omitempty"`
}

// ReadReport reads the Outcomes of a report file (Options.Report), one
// JSON line each. A line that is not an Outcome is an error that names
// the file and the line; the Outcomes before it are returned with it.
func ReadReport(path string) ([]Outcome, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var outs []Outcome
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var o Outcome
		if err := json.Unmarshal(line, &o); err != nil || o.Test == "" {
			return outs, fmt.Errorf("%s:%d: expected an outcome of a test as JSON: %q", path, i+1, line)
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// KindExit is the Outcome.Kind of a test that called os.Exit.
const KindExit = "os.Exit"

func kind(err error) string {
	var p *rt.PanicError
	switch {
	case err == nil:
		return "fail"
	case errors.Is(err, rt.ErrLeak):
		return "leak"
	case errors.Is(err, rt.ErrDeadlock):
		return "deadlock"
	case errors.As(err, &p):
		if s, ok := p.Value.(string); ok && strings.HasPrefix(s, "unexpected call to os.Exit") {
			return KindExit
		}
		return "panic"
	case errors.Is(err, sched.ErrBudget):
		return "budget"
	case errors.Is(err, sched.ErrDiverged):
		return "diverged"
	}
	return "error"
}

func writeOutcome(t *testing.T, path string, out Outcome) {
	b, _ := json.Marshal(out)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Errorf("execspec/rt: writing the report: %v", err)
	}
}
