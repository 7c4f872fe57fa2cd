package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// FuzzReader: no input makes the reader panic; every error is an *Error;
// every line the hand-written decoder accepts is valid JSON to
// encoding/json; and what it accepts, written again, reads back the same.
func FuzzReader(f *testing.F) {
	f.Add([]byte(sampleJSON))
	f.Add([]byte(sampleJSON[:len(sampleJSON)-7]))
	f.Add([]byte(sampleV11JSON))
	f.Add([]byte(`{"format":"execspec-trace","version":1,"workers":1}` + "\n" + `{"seq":1,"kind":"stop","priority":-2147483648}`))
	f.Add([]byte(`{"format":"execspec-trace","version":1,"workers":1,"minor":1}` + "\n" + `{"seq":1,"kind":"poll-end","task":1,"worker":0,"result":"error","priority":-0,"future":9223372036854775807,"time":0}`))
	f.Add([]byte(`{"format":"execspec-trace","version":1,"workers":3}` + "\n" + `{"seq":1,"kind":"wake","task":2,"worker":-1,"detail":"\ud800\u00e9"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The fast decoder decides a line only as the general one would.
		var d decoder
		for _, line := range bytes.Split(data, []byte("\n")) {
			var fast, general Event
			if decodeFast(line, &fast) {
				if err := d.decodeGeneral(line, &general); err != nil {
					t.Fatalf("fast decoder accepts %q, general rejects it: %v", line, err)
				}
				if fast != general {
					t.Fatalf("%q: fast %+v, general %+v", line, fast, general)
				}
			}
		}
		r, err := NewReaderSize(bytes.NewReader(data), "fuzz", 4096)
		if err != nil {
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("header error %v is not an *Error", err)
			}
			return
		}
		var events []Event
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var te *Error
				if !errors.As(err, &te) || te.Line < 1 {
					t.Fatalf("error %v is not an *Error with a line", err)
				}
				return
			}
			events = append(events, e)
		}
		for _, line := range bytes.Split(data, []byte("\n"))[1:] {
			if len(bytes.TrimSpace(line)) > 0 && !json.Valid(line) {
				t.Fatalf("accepted a line that is not JSON: %q", line)
			}
		}
		var buf bytes.Buffer
		if err := WriteAll(&buf, r.Header(), events); err != nil {
			t.Fatalf("cannot write back what was read: %v", err)
		}
		_, again, err := ReadAll(&buf, "again")
		if err != nil {
			t.Fatalf("cannot read back what was written: %v\n%s", err, buf.Bytes())
		}
		assertEvents(t, again, events)
	})
}

// FuzzParseText: no input makes ParseText panic, and what it accepts
// formats and parses back the same.
func FuzzParseText(f *testing.F) {
	f.Add([]byte(sampleText))
	f.Add([]byte(sampleV11Text))
	f.Add([]byte("execspec-trace v1.1 workers=1 unobserved=take,take\n#1 out wake f0 @0ns prio=+1\n"))
	f.Add([]byte("execspec-trace v1 executor=\"a b\" workers=1 policy=x\n#1 w0 panic t1 detail=\"\\x00\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, events, err := ParseText(bytes.NewReader(data))
		if err != nil {
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := WriteText(&buf, h, events); err != nil {
			t.Fatalf("cannot format what was parsed: %v", err)
		}
		_, again, err := ParseText(&buf)
		if err != nil {
			t.Fatalf("cannot parse what was formatted: %v\n%s", err, buf.Bytes())
		}
		assertEvents(t, again, events)
	})
}
