//go:build unix

package traces

import (
	"errors"
	"syscall"
)

const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)

// isNoReader reports the error of opening a named pipe for writing, without
// blocking, that no process has open for reading.
func isNoReader(err error) bool { return errors.Is(err, syscall.ENXIO) }
