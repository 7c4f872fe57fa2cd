package traces

import "unicode/utf8"

// decodeFast decodes a line in the exact form appendEvent writes — fields
// in their fixed order, no whitespace, no escapes in names, no duplicate —
// which is what nearly every trace holds. It reports false, having decided
// nothing, for any other line, which the general decoder then reads (and
// accepts or rejects with its message). FuzzReader checks that both agree.
func decodeFast(b []byte, e *Event) bool {
	const head = `{"seq":`
	if len(b) < len(head)+12 || string(b[:len(head)]) != head || b[len(b)-1] != '}' {
		return false
	}
	*e = Event{Worker: -1, Victim: -1}
	i := len(head)
	var ok bool
	if e.Seq, i, ok = fastUint(b, i); !ok {
		return false
	}
	const kind = `,"kind":"`
	if len(b)-i < len(kind) || string(b[i:i+len(kind)]) != kind {
		return false
	}
	i += len(kind)
	var s []byte
	if s, i, ok = fastStr(b, i); !ok {
		return false
	}
	if e.Kind, ok = lookupKind(s); !ok {
		return false
	}
	last := fKind
	victim := false
	for i < len(b)-1 {
		// ,"name":
		if b[i] != ',' || i+2 >= len(b) || b[i+1] != '"' {
			return false
		}
		j := i + 2
		for j < len(b) && b[j] != '"' {
			j++
		}
		if j+1 >= len(b) || b[j+1] != ':' {
			return false
		}
		f := lookupField(b[i+2 : j])
		if f <= last {
			return false // unknown, out of order, or twice
		}
		last = f
		i = j + 2
		switch f {
		case fTask, fWorker, fVictim:
			neg := b[i] == '-'
			if neg {
				i++
			}
			var n uint64
			if n, i, ok = fastUint(b, i); !ok || n >= 1<<62 {
				return false
			}
			v := int64(n)
			if neg {
				v = -v
			}
			switch f {
			case fTask:
				e.Task = v
			case fWorker:
				if v < -1 || v > MaxWorkers {
					return false
				}
				e.Worker = int32(v)
			case fVictim:
				if v < -1 || v > MaxWorkers {
					return false
				}
				e.Victim, victim = int32(v), true
			}
		case fPriority:
			neg := b[i] == '-'
			if neg {
				i++
			}
			var n uint64
			if n, i, ok = fastUint(b, i); !ok || n > 1<<31 || (n == 1<<31 && !neg) {
				return false
			}
			v := int64(n)
			if neg {
				v = -v
			}
			e.Priority, e.Prioritized = int32(v), true
		case fFuture, fTime:
			var n uint64
			if n, i, ok = fastUint(b, i); !ok || n >= 1<<63 || (f == fFuture && n == 0) {
				return false
			}
			if f == fFuture {
				e.Future = int64(n)
			} else {
				e.Time = int64(n)
			}
		case fCall:
			if e.Call, i, ok = fastUint(b, i); !ok {
				return false
			}
		case fRet:
			if e.Return, i, ok = fastUint(b, i); !ok {
				return false
			}
		default:
			if b[i] != '"' {
				return false
			}
			if s, i, ok = fastStr(b, i+1); !ok {
				return false
			}
			switch f {
			case fSource:
				e.Source, ok = lookupSource(s)
			case fQueue:
				e.Queue, ok = lookupQueue(s)
			case fResult:
				e.Result, ok = lookupResult(s)
			case fOutcome:
				e.Outcome, ok = lookupOutcome(s)
			case fRule:
				e.Rule, ok = lookupRule(s)
			case fDetail:
				ok = utf8.Valid(s)
				e.Detail = string(s)
			case fReason:
				var err error
				e.Reason, err = ParseStopReason(string(s))
				ok = err == nil
			}
			if !ok {
				return false
			}
		}
	}
	if i != len(b)-1 || (victim && e.Source != SourceSteal) {
		return false
	}
	return true
}

// fastUint reads a decimal without sign or leading zeros and not followed
// by a fraction or exponent.
func fastUint(b []byte, i int) (uint64, int, bool) {
	start := i
	var n uint64
	for i < len(b) {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		if n > (1<<64-1-uint64(c))/10 {
			return 0, i, false
		}
		n = n*10 + uint64(c)
		i++
	}
	if i == start || (b[start] == '0' && i-start > 1) || i == len(b) {
		return 0, i, false
	}
	if c := b[i]; c != ',' && c != '}' {
		return 0, i, false
	}
	return n, i, true
}

// fastStr reads the rest of a string that has no escape and no control
// character, from just after its opening quote, and returns the index after
// its closing quote.
func fastStr(b []byte, i int) ([]byte, int, bool) {
	start := i
	for i < len(b) {
		c := b[i]
		if c == '"' {
			return b[start:i], i + 1, true
		}
		if c == '\\' || c < 0x20 {
			return nil, i, false
		}
		i++
	}
	return nil, i, false
}
