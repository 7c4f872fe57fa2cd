package gotest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// What verify test keeps of go test's output, whatever the tests print: a
// line is cut at maxTestLine bytes (the rest is read and dropped, so that
// the test binary never blocks on a pipe nobody reads), and once
// maxTestOutput bytes are kept, only the lines the report reads (the
// test events of go test -v, panics) and the last tailLines are.
const (
	maxTestLine   = 1 << 20
	maxTestOutput = 64 << 20
	tailLines     = 200
)

// readLines calls f with each line of r, without its newline, cut to limit
// bytes (a cut line ends with a note of how much was left out). It reads
// r to its end or to its first error other than a line too long.
func readLines(r io.Reader, limit int, f func(line string)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	dropped := 0
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if room := limit - len(long); room > 0 {
				long = append(long, chunk[:min(room, len(chunk))]...)
				dropped += len(chunk) - min(room, len(chunk))
			} else {
				dropped += len(chunk)
			}
			continue
		case err != nil && len(chunk) == 0 && len(long) == 0:
			if err == io.EOF {
				return nil
			}
			return err
		}
		chunk = []byte(strings.TrimSuffix(string(chunk), "\n"))
		if room := limit - len(long); room < len(chunk) {
			dropped += len(chunk) - max(room, 0)
			chunk = chunk[:max(room, 0)]
		}
		line := string(append(long, chunk...))
		if dropped > 0 {
			line += fmt.Sprintf(" [... %d more bytes of this line left out]", dropped)
		}
		f(line)
		long, dropped = long[:0], 0
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// testOutput keeps go test's output within maxTestOutput bytes (limit,
// if not zero: tests).
type testOutput struct {
	limit   int
	head    strings.Builder
	full    bool
	left    int      // bytes of lines not kept
	kept    []string // past the bound: the lines the report reads
	tail    []string // past the bound: the last lines, a ring
	tailPos int
}

func (o *testOutput) add(line string) {
	limit := o.limit
	if limit == 0 {
		limit = maxTestOutput
	}
	if !o.full && o.head.Len()+len(line) < limit {
		o.head.WriteString(line)
		o.head.WriteByte('\n')
		return
	}
	o.full = true
	if strings.HasPrefix(line, "=== ") || strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "ok ") {
		o.kept = append(o.kept, line)
		return
	}
	if len(o.tail) < tailLines {
		o.tail = append(o.tail, line)
		return
	}
	o.left += len(o.tail[o.tailPos]) + 1
	o.tail[o.tailPos] = line
	o.tailPos = (o.tailPos + 1) % tailLines
}

// String is the output kept: the first maxTestOutput bytes, a line that
// says what was left out, then the test events that came after, then
// the last lines.
func (o *testOutput) String() string {
	if !o.full {
		return o.head.String()
	}
	var b strings.Builder
	b.WriteString(o.head.String())
	fmt.Fprintf(&b, "[... verify test kept the first %d bytes of the output, then the test events and the last %d lines: %d bytes left out]\n", o.head.Len(), tailLines, o.left)
	for _, l := range o.kept {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for i := range o.tail {
		b.WriteString(o.tail[(o.tailPos+i)%len(o.tail)])
		b.WriteByte('\n')
	}
	return b.String()
}
