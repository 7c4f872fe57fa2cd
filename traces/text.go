package traces

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/execspec/execspec/model"
)

// The text form of a trace is for people, golden files and diffs: one line
// per event, in the order of the JSON form, and it parses back to the same
// events. A trace in text form reads:
//
//	execspec-trace v1 executor=worksteal workers=2 policy=worksteal local-cap=4
//	#1 out spawn t1 -> global
//	#2 w0 take t1 global
//	#3 w0 poll-begin t1
//	#4 w0 poll-end t1 pending
//	#5 out wake t1 scheduled -> global
//	#6 w1 take t1 steal from w0
//
// Each event line is "#SEQ WHO KIND" (WHO is wN for worker N, or out) and
// then, in this order and only when set: tTASK, the take's source, "from wV"
// for a steal's victim, "-> QUEUE", the poll's result, the wake's outcome,
// rule=RULE, reason=REASON (v1.1, on a stop), call=N, ret=N, and the v1.1
// fields prio=N (priority), fN
// (future N) and @Nns (time in nanoseconds), then detail="Go-quoted text".
// Blank lines and lines starting with // are ignored.
//
// A v1.1 trace's header says v1.1 and may carry order=intervals and
// unobserved=NAME,NAME:
//
//	execspec-trace v1.1 executor=x workers=1 policy=priority order=seq aging=2
//	#1 out spawn t1 -> global prio=5
//	#2 w0 take t1 global
//	#3 w0 poll-begin t1 f1 @1200ns
//	#4 w0 poll-end t1 error f1 @5400ns
//	#5 out wake
//	#6 out stop

// WriteText writes h and events in the text form. It fails on an event that
// Validate rejects, or a config key the header line cannot hold.
func WriteText(w io.Writer, h Header, events []Event) error {
	h, err := writtenHeader(h)
	if err != nil {
		return fmt.Errorf("traces: %w", err)
	}
	bw := bufio.NewWriter(w)
	b := make([]byte, 0, 256)
	b = append(b, h.Format...)
	b = append(b, " v"...)
	b = strconv.AppendInt(b, int64(h.Version), 10)
	if h.Minor > 0 {
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(h.Minor), 10)
	}
	b = append(b, " executor="...)
	b = appendWord(b, h.Executor)
	b = append(b, " workers="...)
	b = strconv.AppendInt(b, int64(h.Workers), 10)
	b = append(b, " policy="...)
	b = appendWord(b, h.Policy)
	if h.Order != "" {
		b = append(b, " order="...)
		b = appendWord(b, h.Order)
	}
	if len(h.Unobserved) > 0 {
		b = append(b, " unobserved="...)
		b = appendWord(b, strings.Join(h.Unobserved, ","))
	}
	keys := make([]string, 0, len(h.Config))
	for k := range h.Config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch k {
		case "executor", "workers", "policy", "order", "unobserved":
			return fmt.Errorf("traces: config key %q is a header field's name; the text form cannot hold it", k)
		}
		if !bareWord(k) {
			return fmt.Errorf("traces: config key %q: the text form needs a key without spaces, quotes or '='", k)
		}
		b = append(b, ' ')
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendInt(b, int64(h.Config[k]), 10)
	}
	b = append(b, '\n')
	bw.Write(b)
	for i, e := range events {
		if err := Validate(h, e); err != nil {
			return fmt.Errorf("traces: event %d (seq %d): %w", i, e.Seq, err)
		}
		b = AppendText(b[:0], e)
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

// FormatEvent returns e in the text form, without the newline:
// "#12 w1 take t3 steal from w0".
func FormatEvent(e Event) string { return string(AppendText(nil, e)) }

// AppendText appends e in the text form, without the newline.
func AppendText(b []byte, e Event) []byte {
	b = append(b, '#')
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, ' ')
	b = appendWho(b, e.Worker)
	b = append(b, ' ')
	b = append(b, e.Kind.String()...)
	if e.Task != 0 {
		b = append(b, " t"...)
		b = strconv.AppendInt(b, e.Task, 10)
	}
	if e.Source != SourceNone {
		b = append(b, ' ')
		b = append(b, e.Source.String()...)
		if e.Source == SourceSteal {
			b = append(b, " from "...)
			b = appendWho(b, e.Victim)
		}
	}
	if e.Queue != QueueNone {
		b = append(b, " -> "...)
		b = append(b, e.Queue.String()...)
	}
	if e.Result != ResultNone {
		b = append(b, ' ')
		b = append(b, e.Result.String()...)
	}
	if e.Outcome != OutcomeNone {
		b = append(b, ' ')
		b = append(b, e.Outcome.String()...)
	}
	if e.Rule != 0 {
		b = append(b, " rule="...)
		b = append(b, e.Rule.String()...)
	}
	if e.Reason != StopShutdown {
		b = append(b, " reason="...)
		b = append(b, e.Reason.String()...)
	}
	if e.Call != 0 {
		b = append(b, " call="...)
		b = strconv.AppendUint(b, e.Call, 10)
	}
	if e.Return != 0 {
		b = append(b, " ret="...)
		b = strconv.AppendUint(b, e.Return, 10)
	}
	if e.Prioritized {
		b = append(b, " prio="...)
		b = strconv.AppendInt(b, int64(e.Priority), 10)
	}
	if e.Future != 0 {
		b = append(b, " f"...)
		b = strconv.AppendInt(b, e.Future, 10)
	}
	if e.Time != 0 {
		b = append(b, " @"...)
		b = strconv.AppendInt(b, e.Time, 10)
		b = append(b, "ns"...)
	}
	if e.Detail != "" {
		b = append(b, " detail="...)
		b = strconv.AppendQuote(b, e.Detail)
	}
	return b
}

func appendWho(b []byte, w int32) []byte {
	if w < 0 {
		return append(b, "out"...)
	}
	b = append(b, 'w')
	return strconv.AppendInt(b, int64(w), 10)
}

// bareWord reports whether s can stand unquoted in the text form.
func bareWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '=' || c == '\\' {
			return false
		}
	}
	return true
}

func appendWord(b []byte, s string) []byte {
	if bareWord(s) {
		return append(b, s...)
	}
	return strconv.AppendQuote(b, s)
}

// ParseText reads a trace in the text form. Errors are *Error values with the
// line number, like the Reader's.
func ParseText(r io.Reader) (Header, []Event, error) {
	tr, err := NewTextReader(r, "")
	if err != nil {
		return Header{}, nil, err
	}
	var events []Event
	for {
		e, err := tr.Next()
		if err == io.EOF {
			return tr.Header(), events, nil
		}
		if err != nil {
			return tr.Header(), events, err
		}
		events = append(events, e)
	}
}

// TextReader reads a trace in the text form one event at a time, like
// Reader for the JSON form: bounded memory, errors naming the file and
// line. It is not safe for concurrent use.
type TextReader struct {
	sc   *bufio.Scanner
	name string
	line int
	hdr  Header
	err  error
}

// NewTextReader reads the header of the text-form trace in r; name is
// used in error messages ("" if none).
func NewTextReader(r io.Reader, name string) (*TextReader, error) {
	src := &errReader{r: r}
	tr := &TextReader{sc: bufio.NewScanner(src), name: name}
	tr.sc.Buffer(make([]byte, 4096), DefaultMaxLine)
	tr.sc.Split(stopAtError(src, bufio.ScanLines))
	toks, err := tr.nextLine()
	if err == io.EOF {
		return nil, &Error{File: name, Err: errf(ErrMissingHeader, "empty trace: missing header (want a first line like \"execspec-trace v1 executor=NAME workers=N policy=NAME\")")}
	}
	if err != nil {
		return nil, err
	}
	if tr.hdr, err = parseTextHeader(toks); err != nil {
		return nil, &Error{File: name, Line: tr.line, Err: err}
	}
	return tr, nil
}

// Header returns the trace's header.
func (tr *TextReader) Header() Header { return tr.hdr }

// Line returns the number of the last line read.
func (tr *TextReader) Line() int { return tr.line }

// Next returns the next event, io.EOF after the last one, or an *Error;
// after an error it returns the same error again.
func (tr *TextReader) Next() (Event, error) {
	if tr.err != nil {
		return Event{}, tr.err
	}
	toks, err := tr.nextLine()
	if err != nil {
		return Event{}, err
	}
	e, err := parseTextEvent(toks)
	if err == nil {
		err = Validate(tr.hdr, e)
	}
	if err != nil {
		tr.err = &Error{File: tr.name, Line: tr.line, Err: err}
		return Event{}, tr.err
	}
	return e, nil
}

// nextLine returns the tokens of the next line that is not blank or a
// comment.
func (tr *TextReader) nextLine() ([]string, error) {
	for tr.sc.Scan() {
		tr.line++
		s := strings.TrimSpace(tr.sc.Text())
		if s == "" || strings.HasPrefix(s, "//") {
			continue
		}
		toks, err := tokenize(s)
		if err != nil {
			tr.err = &Error{File: tr.name, Line: tr.line, Err: err}
			return nil, tr.err
		}
		return toks, nil
	}
	if err := tr.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = errf(ErrLineTooLong, fmt.Sprintf("line longer than %d bytes", DefaultMaxLine))
		}
		tr.err = &Error{File: tr.name, Line: tr.line + 1, Err: err}
		return nil, tr.err
	}
	tr.err = io.EOF
	return nil, io.EOF
}

// tokenize splits a line at spaces; a token may hold a Go-quoted string
// after '=' (detail="a b").
func tokenize(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		if s[i] == ' ' || s[i] == '\t' {
			i++
			continue
		}
		start := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			if s[i] == '"' {
				q, err := strconv.QuotedPrefix(s[i:])
				if err != nil {
					return nil, errf(ErrSyntax, fmt.Sprintf("bad quoted string at column %d", i+1))
				}
				i += len(q)
				continue
			}
			i++
		}
		toks = append(toks, s[start:i])
	}
	return toks, nil
}

// wordValue returns the value of a key=value token, unquoting it.
func wordValue(tok, key string) (string, bool, error) {
	v, ok := strings.CutPrefix(tok, key+"=")
	if !ok {
		return "", false, nil
	}
	if strings.HasPrefix(v, `"`) {
		u, err := strconv.Unquote(v)
		if err != nil {
			return "", true, errf(ErrSyntax, fmt.Sprintf("%s: bad quoted string %s", key, v))
		}
		return u, true, nil
	}
	return v, true, nil
}

func parseTextHeader(toks []string) (Header, error) {
	var h Header
	if len(toks) < 2 || toks[0] != Format {
		if len(toks) > 0 && strings.HasPrefix(toks[0], "#") {
			return h, errf(ErrMissingHeader, "missing header: the first line is an event; a trace starts with \"execspec-trace v1 executor=NAME workers=N policy=NAME\"")
		}
		return h, errf(ErrVersion, fmt.Sprintf("unknown trace format (want a first line starting %q)", Format+" v1"))
	}
	h.Format = Format
	switch toks[1] {
	case "v1":
	case "v1.1":
		h.Minor = 1
	default:
		return h, errf(ErrVersion, fmt.Sprintf("unknown trace version %q (this reader knows v1 and v1.1)", toks[1]))
	}
	h.Version = Version
	seen := map[string]bool{}
	for _, t := range toks[2:] {
		k, _, ok := strings.Cut(t, "=")
		if !ok || !bareWord(k) {
			return h, errf(ErrSyntax, fmt.Sprintf("header: %q is not key=value", t))
		}
		if seen[k] {
			return h, errf(ErrSyntax, fmt.Sprintf("header: %s given twice", k))
		}
		seen[k] = true
		v, _, err := wordValue(t, k)
		if err != nil {
			return h, err
		}
		switch k {
		case "executor":
			h.Executor = v
		case "policy":
			h.Policy = v
		case "order":
			h.Order = v
		case "unobserved":
			h.Unobserved = strings.Split(v, ",")
		default:
			n, err := strconv.Atoi(v)
			if err != nil {
				return h, errf(ErrSyntax, fmt.Sprintf("header: %s=%s: want an integer", k, v))
			}
			if k == "workers" {
				h.Workers = n
				continue
			}
			if h.Config == nil {
				h.Config = map[string]int{}
			}
			h.Config[k] = n
		}
	}
	if !seen["workers"] {
		return h, errf(ErrSyntax, "header: workers=N missing")
	}
	return h, CheckHeader(h)
}

func parseWho(s string) (int32, bool) {
	if s == "out" {
		return -1, true
	}
	if len(s) < 2 || s[0] != 'w' {
		return 0, false
	}
	n, ok := parseUint([]byte(s[1:]))
	if !ok || n >= MaxWorkers {
		return 0, false
	}
	return int32(n), true
}

func parseTextEvent(toks []string) (Event, error) {
	e := Event{Worker: -1, Victim: -1}
	if len(toks) < 3 {
		return e, errf(ErrSyntax, "want \"#SEQ WHO KIND ...\" (e.g. \"#3 w0 take t1 global\")")
	}
	seq, ok := strings.CutPrefix(toks[0], "#")
	n, ok2 := parseUint([]byte(seq))
	if !ok || !ok2 {
		return e, errf(ErrSyntax, fmt.Sprintf("%q: want #SEQ, a sequence number", toks[0]))
	}
	e.Seq = n
	if e.Worker, ok = parseWho(toks[1]); !ok {
		return e, errf(ErrSyntax, fmt.Sprintf("%q: want wN for worker N, or out", toks[1]))
	}
	k, err := ParseKind(toks[2])
	if err != nil {
		return e, errf(ErrUnknown, err.Error())
	}
	e.Kind = k
	var seen uint32
	once := func(f int, t string) error {
		if seen&(1<<f) != 0 {
			return errf(ErrSyntax, fmt.Sprintf("%q: %s given twice", t, fieldNames[f]))
		}
		seen |= 1 << f
		return nil
	}
	rest := toks[3:]
	for i := 0; i < len(rest); i++ {
		t := rest[i]
		var f int
		switch {
		case len(t) > 1 && t[0] == 't' && t[1] >= '0' && t[1] <= '9':
			f = fTask
			v, ok := parseUint([]byte(t[1:]))
			if !ok || v > 1<<63-1 {
				return e, errf(ErrSyntax, fmt.Sprintf("%q: want tN, a task id", t))
			}
			e.Task = int64(v)
		case len(t) > 1 && t[0] == 'f' && t[1] >= '0' && t[1] <= '9':
			f = fFuture
			v, ok := parseUint([]byte(t[1:]))
			if !ok || v < 1 || v > 1<<63-1 {
				return e, errf(ErrSyntax, fmt.Sprintf("%q: want fN, a future id ≥ 1", t))
			}
			e.Future = int64(v)
		case len(t) > 3 && t[0] == '@' && strings.HasSuffix(t, "ns"):
			f = fTime
			v, ok := parseUint([]byte(t[1 : len(t)-2]))
			if !ok || v > 1<<63-1 {
				return e, errf(ErrSyntax, fmt.Sprintf("%q: want @Nns, a time in nanoseconds", t))
			}
			e.Time = int64(v)
		case t == "from":
			f = fVictim
			if i+1 == len(rest) {
				return e, errf(ErrSyntax, "from: want the victim, wN")
			}
			i++
			v, ok := parseWho(rest[i])
			if !ok || v < 0 {
				return e, errf(ErrSyntax, fmt.Sprintf("from %q: want the victim, wN", rest[i]))
			}
			e.Victim = v
		case t == "->":
			f = fQueue
			if i+1 == len(rest) {
				return e, errf(ErrSyntax, "->: want a queue, global or local:N")
			}
			i++
			q, ok := lookupQueue([]byte(rest[i]))
			if !ok || q == QueueNone {
				return e, errf(ErrUnknown, fmt.Sprintf("-> %q: want a queue, global or local:N", rest[i]))
			}
			e.Queue = q
		case strings.Contains(t, "="):
			key, _, _ := strings.Cut(t, "=")
			v, _, err := wordValue(t, key)
			if err != nil {
				return e, err
			}
			switch key {
			case "rule":
				f = fRule
				r, err := model.ParseRule(v)
				if err != nil {
					return e, errf(ErrUnknown, err.Error())
				}
				e.Rule = r
			case "call", "ret":
				f = fCall
				if key == "ret" {
					f = fRet
				}
				n, ok := parseUint([]byte(v))
				if !ok {
					return e, errf(ErrSyntax, fmt.Sprintf("%q: want an integer", t))
				}
				if f == fCall {
					e.Call = n
				} else {
					e.Return = n
				}
			case "detail":
				f = fDetail
				e.Detail = v
			case "reason":
				f = fReason
				r, err := ParseStopReason(v)
				if err != nil {
					return e, errf(ErrUnknown, err.Error())
				}
				e.Reason = r
			case "prio":
				f = fPriority
				n, err := strconv.ParseInt(v, 10, 32)
				if err != nil {
					return e, errf(ErrSyntax, fmt.Sprintf("%q: want a priority, an integer from %d to %d", t, -1<<31, 1<<31-1))
				}
				e.Priority, e.Prioritized = int32(n), true
			default:
				return e, errf(ErrUnknown, fmt.Sprintf("%q: unknown key (want rule, call, ret, prio, reason or detail)", t))
			}
		default:
			if s, ok := lookupSource([]byte(t)); ok && s != SourceNone {
				f, e.Source = fSource, s
			} else if r, ok := lookupResult([]byte(t)); ok && r != ResultNone {
				f, e.Result = fResult, r
			} else if o, ok := lookupOutcome([]byte(t)); ok && o != OutcomeNone {
				f, e.Outcome = fOutcome, o
			} else {
				return e, errf(ErrUnknown, fmt.Sprintf("%q: want tN, a source (local, global, steal, lifo), from wN, -> QUEUE, a result (pending, ready, panic, error), an outcome (scheduled, notified, coalesced, late, dropped), fN, @Nns, or rule=, call=, ret=, prio=, detail=", t))
			}
		}
		if err := once(f, t); err != nil {
			return e, err
		}
	}
	if seen&(1<<fVictim) != 0 && e.Source != SourceSteal {
		return e, errf(ErrUnknown, "from wN on an event that is not a steal")
	}
	return e, nil
}
