package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
)

// DefaultMaxLine is the longest line a Reader accepts unless told otherwise:
// long enough for a panic's stack in Detail, short enough that a hostile or
// corrupt file cannot make the reader buffer it whole.
const DefaultMaxLine = 1 << 20

// Reader reads a trace one event at a time, in memory bounded by the
// longest line, whatever the trace's length. It checks every line: the
// header's format and version, each event's syntax, its field values, and
// its form against the header (Validate). The first error stops it; every
// error is an *Error naming the file and line.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	sc     *bufio.Scanner
	name   string
	line   int
	hdr    Header
	dec    decoder
	err    error // sticky
	noNL   bool  // the last line read had no final newline
	closer io.Closer
	max    int
}

// NewReader reads the header of the trace in r and returns a Reader for its
// events. name is used in error messages (a file name, or "" if none).
func NewReader(r io.Reader, name string) (*Reader, error) {
	return NewReaderSize(r, name, DefaultMaxLine)
}

// NewReaderSize is NewReader with a maximum line length in bytes.
func NewReaderSize(r io.Reader, name string, maxLine int) (*Reader, error) {
	if maxLine < 64 {
		maxLine = 64
	}
	rd := &Reader{name: name, max: maxLine}
	src := &errReader{r: r}
	rd.sc = bufio.NewScanner(src)
	rd.sc.Buffer(make([]byte, min(64<<10, maxLine+1)), maxLine+1)
	rd.sc.Split(stopAtError(src, rd.split))
	line, err := rd.nextLine()
	if err == io.EOF {
		return nil, rd.fail(0, errf(ErrMissingHeader, "empty trace: missing header (want a first line like {\"format\":\"execspec-trace\",\"version\":1,...})"))
	}
	if err != nil {
		return nil, err
	}
	h, err := parseHeader(line, rd.noNL)
	if err != nil {
		return nil, rd.fail(rd.line, err)
	}
	rd.hdr = h
	return rd, nil
}

// Open opens the trace file name; Close closes it.
func Open(name string) (*Reader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, name)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// Close closes the file that Open opened; for a Reader from NewReader it
// does nothing.
func (r *Reader) Close() error {
	if r.closer != nil {
		c := r.closer
		r.closer = nil
		return c.Close()
	}
	return nil
}

// Header returns the trace's header.
func (r *Reader) Header() Header { return r.hdr }

// Line returns the number of the last line read (the header is line 1).
func (r *Reader) Line() int { return r.line }

// Next returns the next event, or io.EOF after the last one, or an *Error.
// After an error, Next returns the same error again.
func (r *Reader) Next() (Event, error) {
	var e Event
	err := r.NextInto(&e)
	return e, err
}

// NextInto is Next writing into e, for callers that keep one Event.
func (r *Reader) NextInto(e *Event) error {
	if r.err != nil {
		return r.err
	}
	line, err := r.nextLine()
	if err != nil {
		return err
	}
	if err := r.dec.decodeEvent(line, e); err != nil {
		if r.noNL && errors.Is(err, ErrSyntax) {
			err = errf(ErrTruncated, "truncated trace: the last line ends without a newline and is not a complete JSON object ("+err.Error()+")")
		}
		return r.fail(r.line, err)
	}
	if err := Validate(r.hdr, *e); err != nil {
		return r.fail(r.line, err)
	}
	return nil
}

// All iterates over the remaining events. It stops after the first error,
// which it yields with a zero Event; io.EOF is not yielded.
func (r *Reader) All() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			e, err := r.Next()
			if err == io.EOF {
				return
			}
			if !yield(e, err) || err != nil {
				return
			}
		}
	}
}

// All yields events, in their order, with no error: events held in memory
// (a Log's, say) in the form the checkers read a trace in (conform.Check,
// cover.Coverage.Add), as a Reader's All yields them from a file.
func All(events []Event) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for _, e := range events {
			if !yield(e, nil) {
				return
			}
		}
	}
}

// nextLine returns the next non-blank line, io.EOF, or an error.
func (r *Reader) nextLine() ([]byte, error) {
	for r.sc.Scan() {
		r.line++
		line := r.sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
	err := r.sc.Err()
	if err == nil {
		r.err = io.EOF
		return nil, io.EOF
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return nil, r.fail(r.line+1, errf(ErrLineTooLong, fmt.Sprintf("line longer than %d bytes (not a trace, or raise the reader's limit)", r.max)))
	}
	return nil, r.fail(r.line+1, fmt.Errorf("reading the trace: %w", err))
}

func (r *Reader) fail(line int, err error) error {
	r.err = &Error{File: r.name, Line: line, Err: err}
	return r.err
}

// split is bufio.ScanLines that also notes a last line without a newline.
func (r *Reader) split(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, dropCR(data[:i]), nil
	}
	if atEOF && len(data) > 0 {
		r.noNL = true
		return len(data), dropCR(data), nil
	}
	return 0, nil, nil
}

func dropCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// parseHeader decodes and checks a header line.
func parseHeader(line []byte, last bool) (Header, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(line, &probe); err != nil {
		if last {
			return Header{}, errf(ErrTruncated, "truncated trace: the header line ends without a newline and is not a complete JSON object")
		}
		return Header{}, errf(ErrSyntax, "bad JSON in the header: "+err.Error())
	}
	if err := checkHeaderSyntax(line); err != nil {
		return Header{}, err
	}
	if _, ok := probe["format"]; !ok {
		if _, isEvent := probe["kind"]; isEvent {
			return Header{}, errf(ErrMissingHeader, `missing header: the first line is an event; a trace starts with {"format":"execspec-trace","version":1,...}`)
		}
		return Header{}, errf(ErrMissingHeader, `missing header: the first line has no "format"; a trace starts with {"format":"execspec-trace","version":1,...}`)
	}
	var h Header
	// Check format and version before the strict decode, so that a trace
	// of a later version says so rather than naming a field it added.
	if err := json.Unmarshal(probe["format"], &h.Format); err != nil || h.Format != Format {
		return Header{}, errf(ErrVersion, fmt.Sprintf("unknown trace format %s (want %q)", probe["format"], Format))
	}
	if v, ok := probe["version"]; !ok {
		return Header{}, errf(ErrVersion, fmt.Sprintf("header without a version (this reader knows version %d)", Version))
	} else if err := json.Unmarshal(v, &h.Version); err != nil || h.Version != Version {
		return Header{}, errf(ErrVersion, fmt.Sprintf("unknown trace version %s (this reader knows version %d)", v, Version))
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return Header{}, errf(ErrUnknown, "header: "+err.Error()+" (want format, version, executor, workers, policy, config, and in v1.1 minor, order, unobserved)")
	}
	if err := CheckHeader(h); err != nil {
		return Header{}, err
	}
	return h, nil
}

// ReadFile reads the whole trace in file name. For long traces, iterate
// with Open and Next instead.
func ReadFile(name string) (Header, []Event, error) {
	r, err := Open(name)
	if err != nil {
		return Header{}, nil, err
	}
	defer r.Close()
	return readAll(r)
}

// ReadAll reads the whole trace from r; name is for error messages.
func ReadAll(r io.Reader, name string) (Header, []Event, error) {
	rd, err := NewReader(r, name)
	if err != nil {
		return Header{}, nil, err
	}
	return readAll(rd)
}

func readAll(r *Reader) (Header, []Event, error) {
	var events []Event
	for {
		var e Event
		err := r.NextInto(&e)
		if err == io.EOF {
			return r.hdr, events, nil
		}
		if err != nil {
			return r.hdr, events, err
		}
		events = append(events, e)
	}
}

// errReader remembers the first error other than io.EOF that its reader
// returned.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// stopAtError wraps split so that a read error (an interrupt, a failing
// disk) is not taken for the end of the trace: bufio.Scanner hands split
// the bytes after the last newline as a final line at any error, and
// that line — cut where the read stopped — would be reported as a
// truncated or malformed trace. Here the scan stops with the read error
// instead; the complete lines before it are returned as usual.
func stopAtError(src *errReader, split bufio.SplitFunc) bufio.SplitFunc {
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if atEOF && src.err != nil && bytes.IndexByte(data, '\n') < 0 {
			return 0, nil, src.err
		}
		return split(data, atEOF)
	}
}
