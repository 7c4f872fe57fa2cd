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
	v, ok := lookupKind([]byte(s))
	return v, nameErr(ok, "event kind", s, kindNames[1:])
}

// MarshalText implements encoding.TextMarshaler. An invalid Kind is an error.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("traces: invalid event kind %d", uint8(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) error { return unmarshalName(k, b, ParseKind) }

// String returns the source's name in the trace format: "local", "global",
// "steal", "lifo", or "none".
func (s Source) String() string { return nameOf(sourceNames[:], int(s), "Source") }

// ParseSource returns the Source named s; "none" is SourceNone.
func ParseSource(s string) (Source, error) {
	v, ok := lookupSource([]byte(s))
	return v, nameErr(ok, "take source", s, sourceNames[:])
}

// MarshalText implements encoding.TextMarshaler.
func (s Source) MarshalText() ([]byte, error) {
	return marshalName(sourceNames[:], int(s), "take source")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Source) UnmarshalText(b []byte) error { return unmarshalName(s, b, ParseSource) }

// String returns the result's name: "pending", "ready", "panic", "error"
// (v1.1) or "none".
func (r Result) String() string { return nameOf(resultNames[:], int(r), "Result") }

// ParseResult returns the Result named s; "none" is ResultNone.
func ParseResult(s string) (Result, error) {
	v, ok := lookupResult([]byte(s))
	return v, nameErr(ok, "poll result", s, resultNames[:])
}

// MarshalText implements encoding.TextMarshaler.
func (r Result) MarshalText() ([]byte, error) {
	return marshalName(resultNames[:], int(r), "poll result")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Result) UnmarshalText(b []byte) error { return unmarshalName(r, b, ParseResult) }

// String returns the outcome's name: "scheduled", "notified", "coalesced",
// "late" or "none".
func (o Outcome) String() string { return nameOf(outcomeNames[:], int(o), "Outcome") }

// ParseOutcome returns the Outcome named s; "none" is OutcomeNone.
func ParseOutcome(s string) (Outcome, error) {
	v, ok := lookupOutcome([]byte(s))
	return v, nameErr(ok, "wake outcome", s, outcomeNames[:])
}

// MarshalText implements encoding.TextMarshaler.
func (o Outcome) MarshalText() ([]byte, error) {
	return marshalName(outcomeNames[:], int(o), "wake outcome")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *Outcome) UnmarshalText(b []byte) error { return unmarshalName(o, b, ParseOutcome) }

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
func (q *Queue) UnmarshalText(b []byte) error { return unmarshalName(q, b, ParseQueue) }

// The lookups take bytes so that the decoder allocates nothing: the compiler
// does not allocate for string(b) in a comparison.

var (
	kindIndex    = newNameIndex(kindNames[:])
	sourceIndex  = newNameIndex(sourceNames[:])
	resultIndex  = newNameIndex(resultNames[:])
	outcomeIndex = newNameIndex(outcomeNames[:])
	fieldIndex   = newNameIndex(fieldNames[:])
)

// The lookups are one line each, not one generic function: a generic
// function's call through its dictionary is not inlined, and the decoder
// makes one lookup per field.

func lookupKind(b []byte) (Kind, bool)       { i, ok := kindIndex.find(b); return Kind(i), ok }
func lookupSource(b []byte) (Source, bool)   { i, ok := sourceIndex.find(b); return Source(i), ok }
func lookupResult(b []byte) (Result, bool)   { i, ok := resultIndex.find(b); return Result(i), ok }
func lookupOutcome(b []byte) (Outcome, bool) { i, ok := outcomeIndex.find(b); return Outcome(i), ok }

// lookupField returns the index of the event's field named b, or -1.
func lookupField(b []byte) int {
	if i, ok := fieldIndex.find(b); ok {
		return int(i)
	}
	return -1
}

// A nameIndex finds a name of a short table (an enumeration's names, the
// event's fields) with one array read and one comparison. A name's slot is
// a multiplicative hash of its length and its first three bytes (every
// name has three; no two names of a table share all four), with the
// multiplier chosen when the index is made so that no two names share a
// slot: a perfect hash. It replaced a hand-written switch on a byte or two
// per table, which took as many instructions and had to be written again
// for every table and every new name.
type nameIndex struct {
	mul  uint32
	name [nameSlots]string // the name in each slot, "" for none
	idx  [nameSlots]uint8  // the index of that name in the table
}

const nameSlotBits = 6
const nameSlots = 1 << nameSlotBits

// newNameIndex indexes names; an empty name (an invalid zero value) is
// left out. It panics if no multiplier separates the names, which a test
// of each table rules out.
func newNameIndex(names []string) nameIndex {
	for mul := uint32(0x9E3779B1); mul != 0x9E3779B1-2<<12; mul -= 2 {
		x := nameIndex{mul: mul}
		ok := true
		for i, n := range names {
			if n == "" {
				continue
			}
			h := x.hash([]byte(n))
			if len(n) < 3 || x.name[h] != "" {
				ok = false
				break
			}
			x.name[h], x.idx[h] = n, uint8(i)
		}
		if ok {
			return x
		}
	}
	panic("traces: no perfect hash for the names " + strings.Join(names, ", "))
}

func (x *nameIndex) hash(b []byte) uint32 {
	k := uint32(len(b))<<24 | uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
	return k * x.mul >> (32 - nameSlotBits)
}

// find returns the index of the name b spells, or 0 and false.
func (x *nameIndex) find(b []byte) (uint8, bool) {
	if len(b) < 3 {
		return 0, false
	}
	h := x.hash(b)
	if string(b) != x.name[h] {
		return 0, false
	}
	return x.idx[h], true
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

// The frame of the enumerations' String, Parse, MarshalText and
// UnmarshalText methods, made once: names is the type's table of names,
// index 0 its zero value.

// nameOf returns names[i], or typ(i) for a value outside the table.
func nameOf(names []string, i int, typ string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return typ + "(" + strconv.Itoa(i) + ")"
}

// nameErr is nil if a lookup found s (ok), and otherwise an error naming
// what was looked up ("take source") and the names the format allows.
func nameErr(ok bool, what, s string, names []string) error {
	if ok {
		return nil
	}
	return fmt.Errorf("unknown %s %q (want one of %s)", what, s, strings.Join(names, ", "))
}

// marshalName returns names[i] as bytes; what names the type in the error.
func marshalName(names []string, i int, what string) ([]byte, error) {
	if i < 0 || i >= len(names) {
		return nil, fmt.Errorf("traces: invalid %s %d", what, i)
	}
	return []byte(names[i]), nil
}

// unmarshalName sets *p to what parse finds in b.
func unmarshalName[T any](p *T, b []byte, parse func(string) (T, error)) error {
	v, err := parse(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}
