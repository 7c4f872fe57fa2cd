//go:build amd64 || arm64

package rt

// curg returns the address of the calling goroutine's runtime descriptor:
// the identity of a goroutine for as long as it lives, in about a
// nanosecond.
func curg() uintptr
