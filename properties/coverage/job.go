package coverage

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
// TestCoverJob with the coverage run it wants as JSON in EnvJob. The
// test runs Run on the engine (Config.T) and writes the result,
// as `verify cover --json` prints it, to the job's Out file; progress
// goes to the binary's standard error, one ProgressPrefix line a
// second.

// EnvJob is the environment variable that carries a Job.
const EnvJob = "EXECSPEC_COVER_JOB"

// ProgressPrefix starts a progress line of a Job, followed by
// the Progress as JSON.
const ProgressPrefix = "execspec-cover-progress "

// Job is a coverage run asked of an instrumented test binary.
type Job struct {
	Executor      string        `json:"executor"` // a built-in (Executors), "deep" or "deep/NAME"
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

// JobFromEnv returns the job in EnvJob; ok is false when the
// variable is not set.
func JobFromEnv() (job Job, ok bool, err error) {
	v := os.Getenv(EnvJob)
	if v == "" {
		return job, false, nil
	}
	if err := json.Unmarshal([]byte(v), &job); err != nil {
		return job, true, fmt.Errorf("properties: %s: %v", EnvJob, err)
	}
	if job.Out == "" {
		return job, true, fmt.Errorf("properties: %s: no out file", EnvJob)
	}
	return job, true, nil
}

// Config returns the Config of the job (without T, New or
// Progress).
func (j Job) Config() Config {
	return Config{Executor: j.Executor, Model: j.Model, Strategy: j.Strategy, PCTDepth: j.PCTDepth, Preemptions: j.Preemptions,
		Seed: j.Seed, Runs: j.Runs, Time: j.Time, Goal: j.Goal, StopAtFailure: j.StopAtFailure}
}

// JobResult is the result of a Job: a Result as `verify
// cover --json` prints it, with how the runs stopped, or the error of a
// bad configuration.
type JobResult struct {
	Strategy string  `json:"strategy"`
	Elapsed  float64 `json:"elapsed_seconds"`
	Stopped  string  `json:"stopped"`
	Error    string  `json:"error,omitempty"`
	*ResultJSON
}

// WriteResult writes the outcome of the job's Run to its Out file.
func (j Job) WriteResult(res *Result, cerr error) error {
	var r JobResult
	if cerr != nil {
		r.Error = cerr.Error()
	} else {
		r = JobResult{Strategy: res.Strategy, Elapsed: res.Elapsed.Seconds(), Stopped: res.Stopped, ResultJSON: res.JSON()}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(j.Out, b, 0o600)
}

// ReadJobResult reads what WriteResult wrote to path and returns it
// as a Result, or the error the job's Run returned.
func ReadJobResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r JobResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if r.Error != "" {
		return nil, errors.New(r.Error)
	}
	if r.ResultJSON == nil || r.Report == nil {
		return nil, fmt.Errorf("%s: no coverage report", path)
	}
	j := r.ResultJSON
	res := &Result{Report: j.Report, Strategy: r.Strategy, Elapsed: time.Duration(r.Elapsed * float64(time.Second)), Stopped: r.Stopped,
		RunFailures: j.RunFailures, Guided: j.Guided, Exhaustive: j.Exhaustive}
	if j.FirstFailure != "" {
		res.FirstFailure = errors.New(j.FirstFailure)
		res.FailureAfter = time.Duration(j.FirstFailureSeconds * float64(time.Second))
		res.FailureRun = j.FirstFailureRun - 1
	}
	return res, nil
}
