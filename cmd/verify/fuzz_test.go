package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// FuzzFlags: parsing and validating the flags of check, model and run never
// panics, and whatever validation accepts lies in the documented ranges.
func FuzzFlags(f *testing.F) {
	for _, s := range []string{
		"check --last 9223372036854775806 x", "check --last -1 x", "check --linearizability --lin-budget 1ns x",
		"model --local-cap 0", "model --parallel 1000000", "model --policy fifo --steal-half", "model --property fairness",
		"model --max-memory -1 --timeout -1s", "run --checks 9223372036854775807", "run --pct 1000000000 --uncontrolled",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		if len(args) == 0 {
			return
		}
		sink := io.Discard
		switch args[0] {
		case "check":
			var c checkFlags
			fs := checkFlagSet(sink, &c)
			if fs.Parse(args[1:]) != nil || validateFlags(fs, checkFlagSpecs(&c)) != nil {
				return
			}
			if c.last < 0 || c.last > maxLast || c.linBudget < time.Millisecond || c.stuckAfter < 1 {
				t.Fatalf("accepted %q: last %d, lin-budget %v, stuck-after %v", line, c.last, c.linBudget, c.stuckAfter)
			}
		case "model":
			var m modelFlags
			fs := modelFlagSet(sink, &m)
			if fs.Parse(args[1:]) != nil || checkModelFlags(fs, &m) != nil {
				return
			}
			if m.parallel < 0 || m.parallel > maxParallel || m.maxStates < 0 || m.maxMemMiB < 0 || m.timeout < 0 || m.cfg.Wakes < 1 {
				t.Fatalf("accepted %q: %+v", line, m)
			}
			if m.property == "fairness" && !m.cfg.Endless {
				t.Fatalf("accepted %q: fairness without --endless", line)
			}
			m.resolve() // must not panic either
		case "run":
			var r runFlags
			fs := runFlagSet(sink, &r)
			if fs.Parse(args[1:]) != nil || validateFlags(fs, runFlagSpecs(&r)) != nil {
				return
			}
			if r.checks < 1 || r.checks > maxChecks || r.pct < 0 || r.pct > maxPCTDepth || r.shrink < 0 {
				t.Fatalf("accepted %q: checks %d pct %d shrink %v", line, r.checks, r.pct, r.shrink)
			}
		}
	})
}

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
		if !isInterrupted(err) {
			t.Fatalf("got %v, want an interrupted read", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not end")
	}
}
