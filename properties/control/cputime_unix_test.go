//go:build unix

package control

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) the process has used, so a
// benchmark can report throughput per CPU-second, which does not depend on
// how loaded the machine is.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
