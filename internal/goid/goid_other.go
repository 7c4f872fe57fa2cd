//go:build !amd64 && !arm64

package goid

import "runtime"

// Curg returns the calling goroutine's id, parsed from runtime.Stack. On
// amd64 and arm64 an assembly version reads the goroutine's descriptor
// instead: this one is correct everywhere but costs microseconds.
func Curg() uintptr {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	var id uintptr
	// "goroutine 123 [running]:"
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}
