package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/execspec/execspec/traces"
)

// errInterrupted is what a read returns once the command was interrupted
// (SIGINT or SIGTERM). It wraps context.Canceled, and the trace readers wrap
// it in turn, so IsInterrupted(err) tells an interrupted read from bad
// input.
var errInterrupted = fmt.Errorf("interrupted: %w", context.Canceled)

// IsInterrupted reports whether err comes from an interrupted read.
func IsInterrupted(err error) bool {
	return errors.Is(err, errInterrupted) || errors.Is(err, context.Canceled)
}

// openedInputs are the files this process opened as inputs: WriteFile
// never writes onto one of them.
var (
	openedMu     sync.Mutex
	openedInputs []string
)

// WriteFile writes the output file name with write, through
// traces.WriteOutput: whole or not at all, never through a symbolic link,
// and never onto a file this process read as input.
func WriteFile(name string, write func(io.Writer) error) error {
	openedMu.Lock()
	inputs := append([]string(nil), openedInputs...)
	openedMu.Unlock()
	return traces.WriteOutput(name, func(o *traces.OutputFile) error { return write(o) }, inputs...)
}

// OpenInput opens file, or standard input for "-", for reading that
// observes ctx: once ctx is done, the next Read returns errInterrupted at
// once, even when the input is a pipe or a terminal that sends nothing (a
// blocking read cannot be interrupted, so such inputs are read by a
// goroutine, and Read waits for it or for ctx, whichever comes first).
// Opening a named pipe, which blocks until a writer opens it, is
// interruptible too. Regular files never block: they are read directly,
// with ctx checked before each Read. Memory: two 64 KiB buffers.
func OpenInput(ctx context.Context, file string) (io.Reader, func(), error) {
	if file == "-" {
		return newCancelReader(ctx, os.Stdin), func() {}, nil
	}
	openedMu.Lock()
	openedInputs = append(openedInputs, file)
	openedMu.Unlock()
	if st, err := os.Stat(file); err == nil && st.Mode().IsRegular() {
		f, err := os.Open(file)
		if err != nil {
			return nil, nil, err
		}
		return ctxReader{ctx, f}, func() { f.Close() }, nil
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(file)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, nil, o.err
		}
		return newCancelReader(ctx, o.f), func() { o.f.Close() }, nil
	case <-ctx.Done():
		go func() { // close the file if the open ever returns
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, nil, fmt.Errorf("opening %s: %w", file, errInterrupted)
	}
}

// ctxReader checks ctx before each Read of a source that never blocks long.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, errInterrupted
	}
	return c.r.Read(p)
}

// cancelReader reads src on its own goroutine, so that Read can give up
// when ctx is done while src blocks. The goroutine reads into one of two
// buffers and hands it over; Read copies out of it and hands it back, so
// no buffer is ever written and read at once.
type cancelReader struct {
	ctx  context.Context
	data chan chunk
	free chan []byte
	cur  []byte // what is left of the chunk being read
	buf  []byte // the buffer cur is in, to hand back
	err  error  // sticky: the source's error, or errInterrupted
}

type chunk struct {
	b, buf []byte
	err    error
}

func newCancelReader(ctx context.Context, src io.Reader) *cancelReader {
	r := &cancelReader{ctx: ctx, data: make(chan chunk), free: make(chan []byte, 2)}
	r.free <- make([]byte, 64<<10)
	r.free <- make([]byte, 64<<10)
	go func() {
		for {
			var buf []byte
			select {
			case buf = <-r.free:
			case <-ctx.Done():
				return
			}
			n, err := src.Read(buf)
			select {
			case r.data <- chunk{buf[:n], buf, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

func (r *cancelReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.buf != nil {
			r.free <- r.buf // never blocks: there are two buffers and room for two
			r.buf = nil
		}
		select {
		case c := <-r.data:
			r.cur, r.buf, r.err = c.b, c.buf, c.err
		case <-r.ctx.Done():
			r.err = errInterrupted
			return 0, r.err
		}
	}
	if r.ctx.Err() != nil {
		r.err, r.cur = errInterrupted, nil
		return 0, r.err
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}
