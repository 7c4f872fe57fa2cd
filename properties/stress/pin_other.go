//go:build !linux

package stress

import (
	"errors"
	"runtime"
)

var errNoAffinity = errors.New("CPU affinity is only supported on Linux")

// CPUs returns 0 … GOMAXPROCS-1: without affinity support, the CPUs are
// only nominal.
func CPUs() ([]int, error) {
	cpus := make([]int, runtime.GOMAXPROCS(0))
	for i := range cpus {
		cpus[i] = i
	}
	return cpus, nil
}

// ThreadCPUs is not supported outside Linux.
func ThreadCPUs() ([]int, error) { return nil, errNoAffinity }

func pinThread(cpu int) error { return errNoAffinity }
