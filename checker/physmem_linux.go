package checker

import "golang.org/x/sys/unix"

// physicalMemory returns the machine's RAM in bytes, or 0 if unknown.
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}
