package coverage_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/properties/coverage"
)

// A Job's result goes through a file from the instrumented binary to
// verify cover: what Run returned comes back, and a bad file or job is
// a clear error.
func TestCoverJobRoundTrip(t *testing.T) {
	dir := t.TempDir()
	job := coverage.Job{Executor: "worksteal", Strategy: "guided", Seed: 3, Runs: 60, Out: filepath.Join(dir, "result.json")}
	res, err := coverage.Run(context.Background(), job.Config())
	if err != nil {
		t.Fatal(err)
	}
	res.FirstFailure = errors.New("a planted failure")
	res.FailureRun = 4
	if err := job.WriteResult(res, nil); err != nil {
		t.Fatal(err)
	}
	got, err := coverage.ReadJobResult(job.Out)
	if err != nil {
		t.Fatal(err)
	}
	if got.Strategy != "guided" || got.Stopped != res.Stopped || got.Report.Runs != 60 || got.Report.VisitedStates != res.Report.VisitedStates ||
		got.Report.String() != res.Report.String() || got.Guided == nil || *got.Guided != *res.Guided ||
		got.FirstFailure == nil || got.FirstFailure.Error() != "a planted failure" || got.FailureRun != 4 {
		t.Fatalf("read back %+v, wrote %+v", got, res)
	}

	if err := job.WriteResult(nil, errors.New("cover: unknown strategy \"x\"")); err != nil {
		t.Fatal(err)
	}
	if _, err := coverage.ReadJobResult(job.Out); err == nil || !strings.Contains(err.Error(), "unknown strategy") {
		t.Errorf("a job that failed: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\"strategy\": 3"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := coverage.ReadJobResult(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a torn result: %v", err)
	}
	if err := os.WriteFile(bad, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := coverage.ReadJobResult(bad); err == nil || !strings.Contains(err.Error(), "no coverage report") {
		t.Errorf("an empty result: %v", err)
	}

	t.Setenv(coverage.EnvJob, "{\"runs\": \"many\"}")
	if _, ok, err := coverage.JobFromEnv(); !ok || err == nil || !strings.Contains(err.Error(), coverage.EnvJob) {
		t.Errorf("a bad job: ok %v, %v", ok, err)
	}
	t.Setenv(coverage.EnvJob, "{\"runs\": 5}")
	if _, ok, err := coverage.JobFromEnv(); !ok || err == nil || !strings.Contains(err.Error(), "no out file") {
		t.Errorf("a job without its out file: ok %v, %v", ok, err)
	}
}
