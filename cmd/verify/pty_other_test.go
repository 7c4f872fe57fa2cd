//go:build !linux

package main

import (
	"errors"
	"os"
	"testing"
)

func openPTY() (master, slave *os.File, err error) {
	return nil, nil, errors.New("not on Linux")
}

func rawMode(t *testing.T, f *os.File) bool { return false }
