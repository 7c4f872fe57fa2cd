package traces

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// Writer writes a trace: the header line, then one line per event. It
// buffers; call Flush (or Close, for a Writer from Create) at the end.
// Each event is checked with Validate before it is written, so that a
// Writer never produces a trace its Reader rejects.
//
// Write allocates nothing. A Writer is not safe for concurrent use: record
// into a Log and write its events afterwards.
type Writer struct {
	bw  *bufio.Writer
	h   Header
	buf []byte
	n   int
	err error
	out *OutputFile // from Create: committed by Close
}

// NewWriter writes h as the header of a trace on w. An empty Format and a
// zero Version are filled in; a header CheckHeader rejects is an error.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h, err := writtenHeader(h)
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("traces: header: %w", err)
	}
	tw := &Writer{bw: bufio.NewWriterSize(w, 64<<10), h: h, buf: make([]byte, 0, 256)}
	tw.bw.Write(b)
	if err := tw.bw.WriteByte('\n'); err != nil {
		return nil, err
	}
	return tw, nil
}

// Create starts writing the file name and returns a Writer on it; Close
// flushes and commits it. The file is written as CreateOutput writes one:
// never through a symbolic link, never onto one of inputs, and it appears
// whole or not at all (a failed write leaves the path as it was).
func Create(name string, h Header, inputs ...string) (*Writer, error) {
	o, err := CreateOutput(name, inputs...)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(o, h)
	if err != nil {
		o.Abort()
		return nil, err
	}
	w.out = o
	return w, nil
}

// Header returns the header as written.
func (w *Writer) Header() Header { return w.h }

// Write writes one event. An invalid event is an error and writes nothing;
// so is any earlier write error.
func (w *Writer) Write(e Event) error {
	if w.err != nil {
		return w.err
	}
	if err := Validate(w.h, e); err != nil {
		return fmt.Errorf("traces: event %d (seq %d): %w", w.n, e.Seq, err)
	}
	w.buf = appendEvent(w.buf[:0], &e)
	w.buf = append(w.buf, '\n')
	if _, err := w.bw.Write(w.buf); err != nil {
		w.err = err
		return err
	}
	w.n++
	return nil
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
	}
	return w.err
}

// Close flushes, and commits the file that Create started (after an
// error, it removes it instead).
func (w *Writer) Close() error {
	err := w.Flush()
	if w.out != nil {
		if err != nil {
			w.out.Abort()
		} else {
			err = w.out.Commit()
		}
		w.out = nil
	}
	return err
}

// WriteFile writes a whole trace to the file name, through Create.
func WriteFile(name string, h Header, events []Event, inputs ...string) error {
	w, err := Create(name, h, inputs...)
	if err != nil {
		return err
	}
	for _, e := range events {
		if err := w.Write(e); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// WriteAll writes a whole trace to w.
func WriteAll(w io.Writer, h Header, events []Event) error {
	tw, err := NewWriter(w, h)
	return writeEvents(tw, err, events, (*Writer).Flush)
}

// AppendJSONString appends s as a JSON string, as a Writer writes the
// strings of a trace: invalid UTF-8 becomes U+FFFD, so that the line is
// always valid JSON, and only '"', '\\' and the control characters are
// escaped. It is for writers of other JSON forms of a trace.
func AppendJSONString(b []byte, s string) []byte { return appendString(b, s) }

// writeEvents writes events through w and ends it with end, stopping at
// the first error; err, the error of making w, is returned as it is.
func writeEvents[W interface{ Write(Event) error }](w W, err error, events []Event, end func(W) error) error {
	if err != nil {
		return err
	}
	for _, e := range events {
		if err := w.Write(e); err != nil {
			return err
		}
	}
	return end(w)
}
