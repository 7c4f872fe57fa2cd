package rtproc

import (
	"os"
	"sync"
)

// Garbage collection under control. A controlled run allocates many
// small, short-lived values (a step's select, a goroutine's record, the
// suite's per-task records) while its live heap stays at a few
// megabytes, so with the runtime's defaults (a heap goal of twice the
// live heap, 4 MiB at least) it collected every few milliseconds:
// about a hundred collections a second, each stopping the goroutine
// that holds control to scan its stack, and a tenth of the CPU of a pool
// suite's runs. A ballast, a large allocation without pointers that is
// never touched (so never resident and never scanned), raises the heap
// goal by twice its size: with small live heaps the collector runs about
// a tenth as often, and with large ones it changes next to nothing. It is
// left out when GOGC is set: the user then chose how the collector runs.
// Nothing a program can observe depends on when collections happen but
// what already depends on them anyway (finalizers, sync.Pool's
// clearing), and a controlled run that depended on those would not
// replay across processes either.

// ballastSize is the ballast's size.
const ballastSize = 16 << 20

var (
	ballastOnce sync.Once
	ballast     []byte
)

// LessGC puts the ballast in place, once per process, unless GOGC is set.
func LessGC() {
	ballastOnce.Do(func() {
		if os.Getenv("GOGC") == "" {
			ballast = make([]byte, ballastSize)
		}
	})
}
