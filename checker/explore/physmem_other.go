//go:build !linux

package explore

// physicalMemory returns the machine's RAM in bytes, or 0 if unknown.
func physicalMemory() int64 { return 0 }
