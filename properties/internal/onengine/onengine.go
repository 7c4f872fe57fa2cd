package onengine

import (
	"os"

	"github.com/execspec/execspec/instrument/harness"
)

// Active reports whether the process runs under the instrumented engine:
// a test binary that `verify test` built and started (its EXECSPEC_*
// environment is set).
func Active() bool {
	return os.Getenv(harness.EnvRuns) != "" || os.Getenv(harness.EnvSchedule) != ""
}

// Steps bounds the yield points of one run on the engine: every atomic
// operation, lock and channel operation of the code under test is one,
// many more than an executor's Scheduler calls.
const Steps = 1_000_000
