package traces

import (
	"fmt"
	"strconv"
	"strings"
)

// The names of Kind, Source, Result and Outcome values, as the trace format
// spells them. Index 0 is the zero value ("" for an invalid Kind, "none" for
// the others); the format omits zero values.
var (
	kindNames    = [...]string{"", "spawn", "take", "poll-begin", "poll-end", "wake", "requeue", "park", "unpark", "panic", "step", "register", "stop"}
	sourceNames  = [...]string{"none", "local", "global", "steal", "lifo"}
	resultNames  = [...]string{"none", "pending", "ready", "panic", "error"}
	outcomeNames = [...]string{"none", "scheduled", "notified", "coalesced", "late", "dropped"}
)

// String returns the kind's name in the trace format, e.g. "poll-end".
func (k Kind) String() string {
	if k != 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Valid reports whether k is one of the declared kinds.
func (k Kind) Valid() bool { return k != 0 && int(k) < len(kindNames) }

// ParseKind returns the Kind named s ("take").
func ParseKind(s string) (Kind, error) {
	if k, ok := lookupKind([]byte(s)); ok {
		return k, nil
	}
	return 0, fmt.Errorf("unknown event kind %q (want one of %s)", s, strings.Join(kindNames[1:], ", "))
}

// MarshalText implements encoding.TextMarshaler. An invalid Kind is an error.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("traces: invalid event kind %d", uint8(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// String returns the source's name in the trace format: "local", "global",
// "steal", "lifo", or "none".
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "Source(" + strconv.Itoa(int(s)) + ")"
}

// ParseSource returns the Source named s; "none" is SourceNone.
func ParseSource(s string) (Source, error) {
	if v, ok := lookupSource([]byte(s)); ok {
		return v, nil
	}
	return 0, fmt.Errorf("unknown take source %q (want one of %s)", s, strings.Join(sourceNames[:], ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (s Source) MarshalText() ([]byte, error) {
	if int(s) >= len(sourceNames) {
		return nil, fmt.Errorf("traces: invalid take source %d", uint8(s))
	}
	return []byte(sourceNames[s]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Source) UnmarshalText(b []byte) error {
	v, err := ParseSource(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// String returns the result's name: "pending", "ready", "panic", "error"
// (v1.1) or "none".
func (r Result) String() string {
	if int(r) < len(resultNames) {
		return resultNames[r]
	}
	return "Result(" + strconv.Itoa(int(r)) + ")"
}

// ParseResult returns the Result named s; "none" is ResultNone.
func ParseResult(s string) (Result, error) {
	if v, ok := lookupResult([]byte(s)); ok {
		return v, nil
	}
	return 0, fmt.Errorf("unknown poll result %q (want one of %s)", s, strings.Join(resultNames[:], ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (r Result) MarshalText() ([]byte, error) {
	if int(r) >= len(resultNames) {
		return nil, fmt.Errorf("traces: invalid poll result %d", uint8(r))
	}
	return []byte(resultNames[r]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Result) UnmarshalText(b []byte) error {
	v, err := ParseResult(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// String returns the outcome's name: "scheduled", "notified", "coalesced",
// "late" or "none".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// ParseOutcome returns the Outcome named s; "none" is OutcomeNone.
func ParseOutcome(s string) (Outcome, error) {
	if v, ok := lookupOutcome([]byte(s)); ok {
		return v, nil
	}
	return 0, fmt.Errorf("unknown wake outcome %q (want one of %s)", s, strings.Join(outcomeNames[:], ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (o Outcome) MarshalText() ([]byte, error) {
	if int(o) >= len(outcomeNames) {
		return nil, fmt.Errorf("traces: invalid wake outcome %d", uint8(o))
	}
	return []byte(outcomeNames[o]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *Outcome) UnmarshalText(b []byte) error {
	v, err := ParseOutcome(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// String returns the queue's name: "global", "local:N" for worker N's local
// queue, or "none".
func (q Queue) String() string {
	switch {
	case q == QueueNone:
		return "none"
	case q == QueueGlobal:
		return "global"
	case q > 0:
		return "local:" + strconv.Itoa(q.Worker())
	}
	return "Queue(" + strconv.Itoa(int(q)) + ")"
}

// appendQueue appends q's name; q must be global or local.
func appendQueue(b []byte, q Queue) []byte {
	if q == QueueGlobal {
		return append(b, "global"...)
	}
	b = append(b, "local:"...)
	return strconv.AppendInt(b, int64(q.Worker()), 10)
}

// ParseQueue returns the Queue named s: "global", "local:N", or "none".
func ParseQueue(s string) (Queue, error) {
	if q, ok := lookupQueue([]byte(s)); ok {
		return q, nil
	}
	return 0, fmt.Errorf("unknown queue %q (want \"global\", \"local:N\" with N a worker, or \"none\")", s)
}

// MarshalText implements encoding.TextMarshaler.
func (q Queue) MarshalText() ([]byte, error) {
	if q < QueueGlobal {
		return nil, fmt.Errorf("traces: invalid queue %d", int32(q))
	}
	return []byte(q.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (q *Queue) UnmarshalText(b []byte) error {
	v, err := ParseQueue(string(b))
	if err != nil {
		return err
	}
	*q = v
	return nil
}

// The lookups take bytes so that the decoder allocates nothing: the compiler
// does not allocate for string(b) in a comparison.

func lookupKind(b []byte) (Kind, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var k Kind
	switch b[0] {
	case 's':
		k = KindSpawn
		if b[1] == 't' {
			k = KindStep
			if b[2] == 'o' {
				k = KindStop
			}
		}
	case 't':
		k = KindTake
	case 'p':
		switch {
		case len(b) == 5:
			k = KindPanic
		case len(b) == 4:
			k = KindPark
		case len(b) == 10:
			k = KindPollBegin
		default:
			k = KindPollEnd
		}
	case 'w':
		k = KindWake
	case 'r':
		k = KindRequeue
		if b[2] == 'g' {
			k = KindRegister
		}
	case 'u':
		k = KindUnpark
	default:
		return 0, false
	}
	return k, string(b) == kindNames[k]
}

func lookupSource(b []byte) (Source, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var s Source
	switch b[1] {
	case 'o':
		s = SourceNone
		if b[0] == 'l' {
			s = SourceLocal
		}
	case 'l':
		s = SourceGlobal
	case 't':
		s = SourceSteal
	case 'i':
		s = SourceLIFO
	default:
		return 0, false
	}
	return s, string(b) == sourceNames[s]
}

func lookupResult(b []byte) (Result, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r Result
	switch b[0] {
	case 'n':
		r = ResultNone
	case 'p':
		r = ResultPending
		if b[1] == 'a' {
			r = ResultPanic
		}
	case 'r':
		r = ResultReady
	case 'e':
		r = ResultError
	default:
		return 0, false
	}
	return r, string(b) == resultNames[r]
}

func lookupOutcome(b []byte) (Outcome, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var o Outcome
	switch b[0] {
	case 's':
		o = OutcomeScheduled
	case 'n':
		o = OutcomeNone
		if len(b) > 4 {
			o = OutcomeNotified
		}
	case 'c':
		o = OutcomeCoalesced
	case 'l':
		o = OutcomeLate
	case 'd':
		o = OutcomeDropped
	default:
		return 0, false
	}
	return o, string(b) == outcomeNames[o]
}

func lookupQueue(b []byte) (Queue, bool) {
	switch string(b) {
	case "global":
		return QueueGlobal, true
	case "none":
		return QueueNone, true
	}
	const p = "local:"
	if len(b) <= len(p) || string(b[:len(p)]) != p {
		return 0, false
	}
	n, ok := parseUint(b[len(p):])
	if !ok || n >= 1<<31-1 {
		return 0, false
	}
	return LocalQueue(int(n)), true
}

// parseUint parses a decimal without sign or leading zeros (but "0").
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
