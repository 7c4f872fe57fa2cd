//go:build !linux

package chaselev

import (
	"errors"
	"runtime"
)

// CPUs returns the CPUs this process may run on: here, 0..NumCPU-1.
func CPUs() ([]int, error) {
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus, nil
}

// Pin is not supported on this system: it returns an error.
func Pin(cpu int) (unpin func(), err error) {
	return nil, errors.New("chaselev: pinning to a CPU needs linux")
}
