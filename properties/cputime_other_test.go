//go:build !unix

package properties

import "time"

// cpuTime is not measured on this system; the benchmarks then report
// wall-clock figures only.
func cpuTime() time.Duration { return 0 }
