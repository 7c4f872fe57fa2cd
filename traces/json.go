package traces

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/execspec/execspec/model"
)

// The event line is encoded and decoded by hand: encoding/json would cost
// reflection and an allocation or more per event, and the format is small
// and fixed. The decoder accepts any valid JSON spelling of an event object
// (whitespace, escapes, any field order) and rejects everything else.

// appendEvent appends e as one JSON object, without the newline. Fields
// are written in a fixed order; zero and "none" values are omitted, as are
// Worker -1 and a Victim on anything but a steal.
func appendEvent(b []byte, e *Event) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"kind":"`...)
	b = append(b, kindNames[e.Kind]...)
	b = append(b, '"')
	if e.Task != 0 {
		b = append(b, `,"task":`...)
		b = strconv.AppendInt(b, e.Task, 10)
	}
	if e.Worker >= 0 {
		b = append(b, `,"worker":`...)
		b = strconv.AppendInt(b, int64(e.Worker), 10)
	}
	if e.Source != SourceNone {
		b = append(b, `,"source":"`...)
		b = append(b, sourceNames[e.Source]...)
		b = append(b, '"')
		if e.Source == SourceSteal {
			b = append(b, `,"victim":`...)
			b = strconv.AppendInt(b, int64(e.Victim), 10)
		}
	}
	if e.Queue != QueueNone {
		b = append(b, `,"queue":"`...)
		b = appendQueue(b, e.Queue)
		b = append(b, '"')
	}
	if e.Result != ResultNone {
		b = append(b, `,"result":"`...)
		b = append(b, resultNames[e.Result]...)
		b = append(b, '"')
	}
	if e.Outcome != OutcomeNone {
		b = append(b, `,"outcome":"`...)
		b = append(b, outcomeNames[e.Outcome]...)
		b = append(b, '"')
	}
	if e.Rule != 0 {
		b = append(b, `,"rule":"`...)
		b = append(b, e.Rule.String()...)
		b = append(b, '"')
	}
	if e.Call != 0 {
		b = append(b, `,"call":`...)
		b = strconv.AppendUint(b, e.Call, 10)
	}
	if e.Return != 0 {
		b = append(b, `,"ret":`...)
		b = strconv.AppendUint(b, e.Return, 10)
	}
	if e.Prioritized {
		b = append(b, `,"priority":`...)
		b = strconv.AppendInt(b, int64(e.Priority), 10)
	}
	if e.Future != 0 {
		b = append(b, `,"future":`...)
		b = strconv.AppendInt(b, e.Future, 10)
	}
	if e.Time != 0 {
		b = append(b, `,"time":`...)
		b = strconv.AppendInt(b, e.Time, 10)
	}
	if e.Detail != "" {
		b = append(b, `,"detail":`...)
		b = appendString(b, e.Detail)
	}
	if e.Reason != StopShutdown {
		b = append(b, `,"reason":"`...)
		b = append(b, stopReasonNames[e.Reason]...)
		b = append(b, '"')
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, so
// that the line is always valid JSON.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Field indexes, for the duplicate check.
const (
	fSeq = iota
	fKind
	fTask
	fWorker
	fSource
	fVictim
	fQueue
	fResult
	fOutcome
	fRule
	fCall
	fRet
	fPriority // v1.1
	fFuture   // v1.1
	fTime     // v1.1
	fDetail
	fReason // v1.1
)

var fieldNames = [...]string{"seq", "kind", "task", "worker", "source", "victim", "queue", "result", "outcome", "rule", "call", "ret", "priority", "future", "time", "detail", "reason"}

// decoder reads one event object from a line.
type decoder struct {
	b       []byte
	i       int
	scratch []byte // unescaped strings; reused across lines
}

func (d *decoder) syntax(want string) error {
	if d.i >= len(d.b) {
		return errf(ErrSyntax, fmt.Sprintf("bad JSON: the line ends where %s was expected", want))
	}
	return errf(ErrSyntax, fmt.Sprintf("bad JSON at byte %d: %s expected, found %q", d.i+1, want, d.b[d.i]))
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\r', '\n':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) eat(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// str reads a JSON string and returns its value. The result aliases the
// line or the scratch buffer: copy it to keep it. It does not check UTF-8:
// names are compared with ASCII constants, and detail is checked by value.
func (d *decoder) str() ([]byte, error) {
	if !d.eat('"') {
		return nil, d.syntax("a string")
	}
	// One pass for the end, an escape or a control character: the strings
	// of a trace are short, so a plain loop beats bytes.IndexByte.
	start := d.i
	for i := start; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			d.i = i + 1
			return d.b[start:i], nil
		case c == '\\':
			d.i = i
			return d.strSlow(start)
		case c < 0x20:
			d.i = i
			return nil, d.syntax("a string character (control characters must be escaped)")
		}
	}
	d.i = len(d.b)
	return nil, d.syntax(`'"' to end the string`)
}

// strSlow continues str for a string with escapes, from start.
func (d *decoder) strSlow(start int) ([]byte, error) {
	s := append(d.scratch[:0], d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			d.scratch = s
			return s, nil
		case c < 0x20:
			return nil, d.syntax("a string character (control characters must be escaped)")
		case c != '\\':
			s = append(s, c)
			d.i++
			continue
		}
		d.i++
		if d.i >= len(d.b) {
			return nil, d.syntax("an escape character")
		}
		c = d.b[d.i]
		d.i++
		switch c {
		case '"', '\\', '/':
			s = append(s, c)
		case 'b':
			s = append(s, '\b')
		case 'f':
			s = append(s, '\f')
		case 'n':
			s = append(s, '\n')
		case 'r':
			s = append(s, '\r')
		case 't':
			s = append(s, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return nil, d.syntax("four hex digits after \\u")
			}
			if utf16Surrogate(r) {
				// A high surrogate followed by \u and a low one is one rune;
				// anything else is replaced, as encoding/json does.
				r2 := rune(-1)
				if r < 0xdc00 && d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
					save := d.i
					d.i += 2
					var ok2 bool
					if r2, ok2 = d.hex4(); !ok2 {
						return nil, d.syntax("four hex digits after \\u")
					}
					if r2 < 0xdc00 || r2 > 0xdfff {
						d.i = save
						r2 = -1
					}
				}
				if r2 >= 0 {
					r = (r-0xd800)<<10 | (r2 - 0xdc00) + 0x10000
				} else {
					r = utf8.RuneError
				}
			}
			s = utf8.AppendRune(s, r)
		default:
			d.i--
			return nil, d.syntax(`an escape (\" \\ \/ \b \f \n \r \t \uXXXX)`)
		}
	}
	return nil, d.syntax(`'"' to end the string`)
}

func utf16Surrogate(r rune) bool { return r >= 0xd800 && r <= 0xdfff }

func (d *decoder) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	d.i += 4
	return r, true
}

// integer reads a JSON number that must be an integer in [lo, hi].
func (d *decoder) integer(field string, lo, hi int64) (int64, error) {
	start := d.i
	neg := d.eat('-')
	ds := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	if err := d.checkDigits(field, start, ds); err != nil {
		return 0, err
	}
	n, ok := parseUint(d.b[ds:d.i])
	if !ok || n > 1<<63 {
		return 0, errf(ErrRange, fmt.Sprintf("%s: %s is out of range", field, d.b[start:d.i]))
	}
	v := int64(n)
	if neg {
		v = -v
	} else if n == 1<<63 {
		return 0, errf(ErrRange, fmt.Sprintf("%s: %s is out of range", field, d.b[start:d.i]))
	}
	if v < lo || v > hi {
		return 0, errf(ErrRange, fmt.Sprintf("%s: %d is out of range (want %d to %d)", field, v, lo, hi))
	}
	return v, nil
}

// unsigned reads a non-negative JSON integer up to 2^64-1.
func (d *decoder) unsigned(field string) (uint64, error) {
	start := d.i
	var n uint64
	over := false
	for d.i < len(d.b) {
		c := d.b[d.i] - '0'
		if c > 9 {
			break
		}
		if n > (1<<64-1-uint64(c))/10 {
			over = true
		}
		n = n*10 + uint64(c)
		d.i++
	}
	if d.i == start && d.i < len(d.b) && d.b[d.i] == '-' {
		return 0, errf(ErrRange, field+": a negative number; want an integer ≥ 0")
	}
	if err := d.checkDigits(field, start, start); err != nil {
		return 0, err
	}
	if over {
		return 0, errf(ErrRange, fmt.Sprintf("%s: %s is out of range (want at most %d)", field, d.b[start:d.i], uint64(1<<64-1)))
	}
	return n, nil
}

// checkDigits checks the digits integer and unsigned have just read,
// d.b[ds:d.i], with the sign, if any, from start: there is one at least,
// no fraction or exponent follows, and no leading zero.
func (d *decoder) checkDigits(field string, start, ds int) error {
	if d.i == ds {
		d.i = start
		return d.syntax(field + ": an integer")
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return errf(ErrUnknown, fmt.Sprintf("%s: %s… is not an integer", field, d.b[start:d.i+1]))
	}
	if d.i-ds > 1 && d.b[ds] == '0' {
		d.i = ds + 1
		return d.syntax(field + ": an integer without leading zeros")
	}
	return nil
}

// decodeEvent decodes one JSON object into e, which it resets first. It
// checks the syntax and the field values, not the event's consistency: that
// is Validate's job.
func (d *decoder) decodeEvent(line []byte, e *Event) error {
	if decodeFast(line, e) {
		return nil
	}
	return d.decodeGeneral(line, e)
}

// decodeGeneral is decodeEvent for any spelling of the object.
func (d *decoder) decodeGeneral(line []byte, e *Event) error {
	*e = Event{Worker: -1, Victim: -1}
	d.b, d.i = line, 0
	d.ws()
	if !d.eat('{') {
		return d.syntax("'{' to start an event object")
	}
	var seen uint32
	d.ws()
	if !d.eat('}') {
		for {
			d.ws()
			key, err := d.str()
			if err != nil {
				return err
			}
			f := lookupField(key)
			if f < 0 {
				return errf(ErrUnknown, fmt.Sprintf("unknown field %q (want %s)", key, fieldList))
			}
			if seen&(1<<f) != 0 {
				return errf(ErrSyntax, fmt.Sprintf("field %q appears twice", key))
			}
			seen |= 1 << f
			d.ws()
			if !d.eat(':') {
				return d.syntax("':' after a field name")
			}
			d.ws()
			if err := d.value(f, e); err != nil {
				return err
			}
			d.ws()
			if d.eat(',') {
				continue
			}
			if d.eat('}') {
				break
			}
			return d.syntax("',' or '}' after a field")
		}
	}
	d.ws()
	if d.i != len(d.b) {
		return d.syntax("the end of the line after the event object")
	}
	if seen&(1<<fKind) == 0 {
		return errf(ErrUnknown, `event without a "kind"`)
	}
	if seen&(1<<fSeq) == 0 {
		return errf(ErrUnknown, `event without a "seq"`)
	}
	if seen&(1<<fVictim) != 0 && e.Source != SourceSteal {
		return errf(ErrUnknown, `"victim" on an event that is not a steal`)
	}
	return nil
}

var fieldList = func() string {
	s := ""
	for i, f := range fieldNames {
		if i > 0 {
			s += ", "
		}
		s += f
	}
	return s
}()

func (d *decoder) value(f int, e *Event) error {
	name := fieldNames[f]
	if d.i < len(d.b) && d.b[d.i] == 'n' && len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		return errf(ErrUnknown, fmt.Sprintf("%s: null; omit a field that has no value", name))
	}
	var err error
	switch f {
	case fSeq:
		e.Seq, err = d.unsigned(name)
	case fCall:
		e.Call, err = d.unsigned(name)
	case fRet:
		e.Return, err = d.unsigned(name)
	case fTask:
		e.Task, err = d.integer(name, -1<<63+1, 1<<63-1)
	case fFuture:
		e.Future, err = d.integer(name, 1, 1<<63-1)
	case fTime:
		e.Time, err = d.integer(name, 0, 1<<63-1)
	case fPriority:
		var v int64
		v, err = d.integer(name, -1<<31, 1<<31-1)
		e.Priority, e.Prioritized = int32(v), true
	case fWorker, fVictim:
		var v int64
		v, err = d.integer(name, -1, MaxWorkers)
		if f == fWorker {
			e.Worker = int32(v)
		} else {
			e.Victim = int32(v)
		}
	default:
		var s []byte
		if s, err = d.str(); err != nil {
			if d.i < len(d.b) && d.b[d.i] != '"' {
				return errf(ErrSyntax, fmt.Sprintf("%s: a string expected", name))
			}
			return err
		}
		switch f {
		case fKind:
			err = decodeName(&e.Kind, s, lookupKind, ParseKind)
		case fSource:
			err = decodeName(&e.Source, s, lookupSource, ParseSource)
		case fQueue:
			err = decodeName(&e.Queue, s, lookupQueue, ParseQueue)
		case fResult:
			err = decodeName(&e.Result, s, lookupResult, ParseResult)
		case fOutcome:
			err = decodeName(&e.Outcome, s, lookupOutcome, ParseOutcome)
		case fRule:
			err = decodeName(&e.Rule, s, lookupRule, model.ParseRule)
		case fReason:
			var r StopReason
			if r, err = ParseStopReason(string(s)); err != nil {
				return errf(ErrUnknown, err.Error())
			}
			e.Reason = r
		case fDetail:
			if !utf8.Valid(s) {
				return errf(ErrSyntax, "detail: invalid UTF-8 in a string")
			}
			e.Detail = string(s)
		}
	}
	return err
}

// decodeName sets *p to the value lookup finds in s without allocating;
// parse, called only when lookup finds none, says why.
func decodeName[T any](p *T, s []byte, lookup func([]byte) (T, bool), parse func(string) (T, error)) error {
	v, ok := lookup(s)
	if !ok {
		_, err := parse(string(s))
		return errf(ErrUnknown, err.Error())
	}
	*p = v
	return nil
}

func lookupRule(b []byte) (model.Rule, bool) {
	for _, r := range model.Rules {
		if string(b) == r.String() {
			return r, true
		}
	}
	return 0, false
}
