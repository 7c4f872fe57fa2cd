package traces

import (
	"errors"
	"strconv"
)

// The kinds of bad input, for errors.Is. Every error the Reader and Parse
// return wraps one of these inside an *Error that names the file and line.
var (
	ErrTruncated     = errors.New("truncated trace")
	ErrSyntax        = errors.New("bad JSON")
	ErrMissingHeader = errors.New("missing header")
	ErrVersion       = errors.New("unknown trace format or version")
	ErrUnknown       = errors.New("unknown value")
	ErrRange         = errors.New("out of range")
	ErrLineTooLong   = errors.New("line too long")
)

// Error is a problem with one line of a trace: the file (when known), the
// 1-based line number, and what was wrong, wrapping one of the Err values
// above. Its message reads "FILE:LINE: what was expected".
type Error struct {
	File string // "" when the trace did not come from a named file
	Line int    // 1-based; 0 when the problem is not on one line
	Err  error
}

func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		if s == "" {
			s = "line " + strconv.Itoa(e.Line)
		} else {
			s += ":" + strconv.Itoa(e.Line)
		}
	}
	if s == "" {
		return e.Err.Error()
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// kindError is an error message that wraps a sentinel without repeating its
// text: "unknown event kind "x" ..." rather than "unknown value: unknown...".
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

func errf(kind error, msg string) error { return &kindError{kind, msg} }
