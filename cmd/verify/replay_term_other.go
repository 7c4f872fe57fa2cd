//go:build !linux

package main

import (
	"errors"
	"os"
)

// rawTerminal: stepping a key at a time is implemented for Linux
// terminals; elsewhere replay prints (--print).
func rawTerminal(f *os.File) (func(), error) {
	return nil, errors.New("stepping a key at a time needs a Linux terminal")
}

// isTTY reports whether f is a character device: the best guess without
// the terminal ioctl.
func isTTY(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
