//go:build linux

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTTY reports whether f is a terminal: a character device that answers
// the terminal ioctl (/dev/null is a character device and is not one).
func isTTY(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
