package cli

import (
	"bytes"
	"context"
	"io"
	"testing"
	"testing/iotest"
	"time"
)

// FuzzInputReader: the interruptible reader of standard input and pipes
// returns exactly the bytes of its source, whatever the chunking, and
// io.EOF after them.
func FuzzInputReader(f *testing.F) {
	f.Add([]byte("{\"format\":\"execspec-trace\"}\n\n\n"), uint8(7))
	f.Add(bytes.Repeat([]byte("x\n"), 70000), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, bufSize uint8) {
		// At most 16,384 reads per input: an input that takes seconds
		// (140 KB a byte at a time) outlives -fuzztime, and the fuzzing
		// engine then fails with "context deadline exceeded" and no input.
		if max := (int(bufSize) + 1) << 14; len(data) > max {
			data = data[:max]
		}
		var src io.Reader = bytes.NewReader(data)
		switch bufSize % 3 {
		case 1:
			src = iotest.OneByteReader(src)
		case 2:
			src = iotest.HalfReader(src)
		}
		r := newCancelReader(context.Background(), src)
		var got bytes.Buffer
		buf := make([]byte, int(bufSize)+1)
		for {
			n, err := r.Read(buf)
			got.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got.Bytes(), data) {
			t.Fatalf("read %d bytes, want %d", got.Len(), len(data))
		}
	})
}

// An interrupted cancelReader ends a Read that blocks, at once.
func TestCancelReaderInterrupted(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := newCancelReader(ctx, pr)
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 10))
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !IsInterrupted(err) {
			t.Fatalf("got %v, want an interrupted read", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not end")
	}
}
