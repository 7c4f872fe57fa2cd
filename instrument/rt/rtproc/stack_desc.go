//go:build amd64 || arm64

package rtproc

import (
	"unsafe"

	"github.com/execspec/execspec/internal/goid"
)

// stackShrunk reports whether the calling goroutine's stack is smaller
// than growStack makes it: the collector halves the stack of a goroutine
// that uses little of it, as a free worker's (gpool.go). goid.Curg is
// here the address of the runtime's descriptor, whose first field is the
// stack's bounds, lo and hi (runtime2.go's g.stack, Go 1.25 and 1.26).
func stackShrunk() bool {
	gp := goid.Curg()
	// The descriptor does not move while its goroutine runs; the
	// conversion goes through memory so as not to read as a misuse of a
	// uintptr.
	b := *(**[2]uintptr)(unsafe.Pointer(&gp))
	return b[1]-b[0] < stackGrown
}
