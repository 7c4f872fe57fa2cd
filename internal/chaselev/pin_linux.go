//go:build linux

package chaselev

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// CPUs returns the CPUs this process may run on.
func CPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for i := range 1024 {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus, nil
}

// Pin locks the calling goroutine to its OS thread and that thread to cpu,
// so that an owner and its thieves run truly in parallel on distinct CPUs.
// The returned function restores the thread's affinity and unlocks it; call
// it from the same goroutine.
func Pin(cpu int) (unpin func(), err error) {
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_setaffinity(cpu %d): %w", cpu, err)
	}
	return func() {
		_ = unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}, nil
}
