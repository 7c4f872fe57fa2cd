//go:build !amd64 && !arm64

package rt

import "runtime"

// curg returns the calling goroutine's id, parsed from runtime.Stack (an
// assembly version on amd64 and arm64 reads the descriptor instead).
func curg() uintptr {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	var id uintptr
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}
