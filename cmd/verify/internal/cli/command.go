package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Exit codes, shared by every subcommand.
const (
	ExitHolds    = 0
	ExitViolated = 1
	ExitUsage    = 2
	ExitUnknown  = 3
)

// Command is one subcommand. Its package declares it; main lists it.
type Command struct {
	Name    string
	Summary string
	// Run parses args and does the work. ctx is cancelled on SIGINT or
	// SIGTERM: every long phase (reading, checking, writing, exploring,
	// shrinking) observes it within 100ms, and the run stops cleanly and
	// prints what it found so far. It returns the exit code.
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// SelfCommand returns how the user can run this command again: the binary's
// name when it is installed, or "go run ./cmd/verify" under go run (whose
// binary lives in a temporary build directory).
func SelfCommand() string {
	arg0 := os.Args[0]
	if strings.Contains(arg0, "go-build") || strings.HasSuffix(arg0, ".test") {
		return "go run ./cmd/verify"
	}
	if filepath.Base(arg0) == arg0 {
		return arg0
	}
	return "verify"
}

// CheckedWriter remembers the first write error of W, so that output
// written with fmt.Fprint (whose errors are easy to drop) is still checked
// once at the end (Err).
type CheckedWriter struct {
	W   io.Writer
	Err error
}

func (c *CheckedWriter) Write(p []byte) (int, error) {
	if c.Err != nil {
		return 0, c.Err
	}
	n, err := c.W.Write(p)
	if err != nil {
		c.Err = err
	}
	return n, err
}

// IsTerminal reports whether w is a terminal, where a progress line may be
// rewritten in place.
func IsTerminal(w io.Writer) bool {
	if os.Getenv("TERM") == "dumb" {
		return false // no cursor movement: progress goes line by line, replay prints
	}
	if c, ok := w.(*CheckedWriter); ok {
		w = c.W
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isTTY(f)
}
