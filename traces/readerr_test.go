package traces

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// cutReader returns s and then err, as a read interrupted in the middle of
// a line does.
type cutReader struct {
	s   string
	err error
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, c.err
	}
	n := copy(p, c.s)
	c.s = c.s[n:]
	return n, nil
}

// A read error in the middle of a line is that error, not a truncated or
// malformed trace: the events before it are read, then Next returns it.
func TestReadErrorIsNotTruncation(t *testing.T) {
	stop := errors.New("interrupted")
	for _, c := range []struct {
		name string
		open func(io.Reader) (interface{ Next() (Event, error) }, error)
		text string
	}{
		{"json", func(r io.Reader) (interface{ Next() (Event, error) }, error) { return NewReader(r, "t.jsonl") },
			`{"format":"execspec-trace","version":1,"executor":"x","workers":1,"policy":"fifo"}` + "\n" +
				`{"seq":1,"kind":"spawn","task":1,"queue":"global"}` + "\n" + `{"seq":2,"kind":"sp`},
		{"text", func(r io.Reader) (interface{ Next() (Event, error) }, error) { return NewTextReader(r, "t.txt") },
			"execspec-trace v1 executor=x workers=1 policy=fifo\n#1 out spawn t1 -> global\n#2 w0 ta"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rd, err := c.open(&cutReader{s: c.text, err: stop})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rd.Next(); err != nil {
				t.Fatalf("the complete event: %v", err)
			}
			_, err = rd.Next()
			if !errors.Is(err, stop) || errors.Is(err, ErrTruncated) || strings.Contains(err.Error(), "truncated") {
				t.Errorf("got %v, want the read error", err)
			}
		})
	}
}
