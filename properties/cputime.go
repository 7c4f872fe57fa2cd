package properties

import (
	"time"

	"github.com/execspec/execspec/internal/cputime"
)

// cpuTime is the process's user + system CPU time (0 where the system does
// not say: the benchmarks then report wall-clock figures only, and the
// default fairness bound counts wall time alone).
func cpuTime() time.Duration { return cputime.Process() }
