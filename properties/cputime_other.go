//go:build !unix

package properties

import "time"

// cpuTime is not measured on this system: 0. The benchmarks then report
// wall-clock figures only, and the default fairness bound counts wall time
// alone.
func cpuTime() time.Duration { return 0 }
