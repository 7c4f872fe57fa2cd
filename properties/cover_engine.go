package properties

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/execspec/execspec/model"
)

// Spec coverage on the instrumented engine from the command line. `verify
// cover` runs in its own process, where nothing is instrumented; with
// --no-hook it builds the test binary of properties/testdata/hookless with
// packages executor and properties/broken instrumented, and runs its
// TestCoverJob with the coverage run it wants as JSON in EnvCoverJob. The
// test runs Cover on the engine (CoverConfig.T) and writes the result,
// as `verify cover --json` prints it, to the job's Out file; progress
// goes to the binary's standard error, one CoverProgressPrefix line a
// second.

// EnvCoverJob is the environment variable that carries a CoverJob.
const EnvCoverJob = "EXECSPEC_COVER_JOB"

// CoverProgressPrefix starts a progress line of a CoverJob, followed by
// the CoverProgress as JSON.
const CoverProgressPrefix = "execspec-cover-progress "

// CoverJob is a coverage run asked of an instrumented test binary.
type CoverJob struct {
	Executor      string        `json:"executor"` // a built-in (CoverExecutors), "deep" or "deep/NAME"
	Model         model.Config  `json:"model"`    // Workers, Tasks, Pendings, Wakes, LocalCap
	Strategy      string        `json:"strategy"`
	PCTDepth      int           `json:"pct_depth"`
	Preemptions   int           `json:"preemptions"`
	Seed          uint64        `json:"seed"`
	Runs          int           `json:"runs"`
	Time          time.Duration `json:"time"`
	Goal          float64       `json:"goal"`
	StopAtFailure bool          `json:"stop_at_failure"`
	Out           string        `json:"out"` // where the result goes
}

// CoverJobFromEnv returns the job in EnvCoverJob; ok is false when the
// variable is not set.
func CoverJobFromEnv() (job CoverJob, ok bool, err error) {
	v := os.Getenv(EnvCoverJob)
	if v == "" {
		return job, false, nil
	}
	if err := json.Unmarshal([]byte(v), &job); err != nil {
		return job, true, fmt.Errorf("properties: %s: %v", EnvCoverJob, err)
	}
	if job.Out == "" {
		return job, true, fmt.Errorf("properties: %s: no out file", EnvCoverJob)
	}
	return job, true, nil
}

// Config returns the CoverConfig of the job (without T, New or
// Progress).
func (j CoverJob) Config() CoverConfig {
	return CoverConfig{Executor: j.Executor, Model: j.Model, Strategy: j.Strategy, PCTDepth: j.PCTDepth, Preemptions: j.Preemptions,
		Seed: j.Seed, Runs: j.Runs, Time: j.Time, Goal: j.Goal, StopAtFailure: j.StopAtFailure}
}

// CoverJobResult is the result of a CoverJob: a CoverResult as `verify
// cover --json` prints it, with how the runs stopped, or the error of a
// bad configuration.
type CoverJobResult struct {
	Strategy string  `json:"strategy"`
	Elapsed  float64 `json:"elapsed_seconds"`
	Stopped  string  `json:"stopped"`
	Error    string  `json:"error,omitempty"`
	*CoverResultJSON
}

// WriteResult writes the outcome of the job's Cover to its Out file.
func (j CoverJob) WriteResult(res *CoverResult, cerr error) error {
	var r CoverJobResult
	if cerr != nil {
		r.Error = cerr.Error()
	} else {
		r = CoverJobResult{Strategy: res.Strategy, Elapsed: res.Elapsed.Seconds(), Stopped: res.Stopped, CoverResultJSON: res.JSON()}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(j.Out, b, 0o600)
}

// ReadCoverJobResult reads what WriteResult wrote to path and returns it
// as a CoverResult, or the error the job's Cover returned.
func ReadCoverJobResult(path string) (*CoverResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r CoverJobResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if r.Error != "" {
		return nil, errors.New(r.Error)
	}
	if r.CoverResultJSON == nil || r.Report == nil {
		return nil, fmt.Errorf("%s: no coverage report", path)
	}
	j := r.CoverResultJSON
	res := &CoverResult{Report: j.Report, Strategy: r.Strategy, Elapsed: time.Duration(r.Elapsed * float64(time.Second)), Stopped: r.Stopped,
		RunFailures: j.RunFailures, Guided: j.Guided, Exhaustive: j.Exhaustive}
	if j.FirstFailure != "" {
		res.FirstFailure = errors.New(j.FirstFailure)
		res.FailureAfter = time.Duration(j.FirstFailureSeconds * float64(time.Second))
		res.FailureRun = j.FirstFailureRun - 1
	}
	return res, nil
}
