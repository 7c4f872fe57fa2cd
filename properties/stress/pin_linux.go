//go:build linux

package stress

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// CPUs returns the CPUs this process may run on (its affinity set), in
// increasing order. It reads the affinity of the calling thread, which
// is the process's unless the caller restricted its own thread: the
// threads this package pins end with their goroutine, so no other
// goroutine runs on them.
func CPUs() ([]int, error) { return ThreadCPUs() }

// ThreadCPUs returns the CPUs the calling OS thread may run on. Call it from
// a goroutine locked to its thread (as the functions run by Go are);
// otherwise the answer is about whichever thread runs the goroutine now.
func ThreadCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("stress: sched_getaffinity: %w", err)
	}
	return members(&set), nil
}

func members(set *unix.CPUSet) []int {
	var cpus []int
	for i := 0; i < len(set)*64 && len(cpus) < set.Count(); i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// pinThread restricts the calling thread to cpu.
func pinThread(cpu int) error {
	if cpu < 0 {
		return errors.New("no CPU given")
	}
	var set unix.CPUSet
	if cpu >= len(set)*64 {
		return fmt.Errorf("CPU %d is beyond the %d CPUs an affinity mask holds", cpu, len(set)*64)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		switch {
		case errors.Is(err, unix.EINVAL):
			return fmt.Errorf("sched_setaffinity(CPU %d): %w (the CPU is not in this process's allowed set: see CPUs)", cpu, err)
		case errors.Is(err, unix.EPERM):
			return fmt.Errorf("sched_setaffinity(CPU %d): %w (affinity changes are not permitted here)", cpu, err)
		}
		return fmt.Errorf("sched_setaffinity(CPU %d): %w", cpu, err)
	}
	return nil
}
