//go:build !linux

package check

import (
	"errors"
	"os"
)

// rawTerminal: stepping a key at a time is implemented for Linux
// terminals; elsewhere replay prints (--print).
func rawTerminal(f *os.File) (func(), error) {
	return nil, errors.New("stepping a key at a time needs a Linux terminal")
}
