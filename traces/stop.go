package traces

import (
	"fmt"
	"strings"
)

// StopReason says why a stop event was recorded (format v1.1, JSON field
// "reason" on the stop event). It tells a crash from a shutdown:
//
//	reason     the executor (or worker) stopped because       tasks not DONE at a stop of the executor
//	shutdown   it was shut down (Close, the runtime dropped)  abandoned: information
//	panic      a panic escaped it (the executor crashed)      lost: a violation
//	unwound    it unwound (a thread's stack unwound, an abort) lost: a violation
//
// The zero StopReason is StopShutdown, and a stop event without a "reason"
// is one, as traces before the field were written: a reader of an older
// trace sees what it meant. After a shutdown, wakes through wakers that
// outlive the executor may still be recorded (a waker may outlive its
// executor): each is a late wake, counted, never a violation. After a
// crash nothing may follow.
type StopReason uint8

// Stop reasons.
const (
	StopShutdown StopReason = iota
	StopPanic
	StopUnwound
)

var stopReasonNames = [...]string{"shutdown", "panic", "unwound"}

// String returns the reason's name in the trace format.
func (r StopReason) String() string { return nameOf(stopReasonNames[:], int(r), "StopReason") }

// Crash reports whether the stop was not an orderly shutdown.
func (r StopReason) Crash() bool { return r != StopShutdown }

// ParseStopReason returns the StopReason named s.
func ParseStopReason(s string) (StopReason, error) {
	for i, n := range stopReasonNames {
		if s == n {
			return StopReason(i), nil
		}
	}
	return 0, fmt.Errorf("unknown stop reason %q (want one of %s)", s, strings.Join(stopReasonNames[:], ", "))
}
