package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// checkHeaderSyntax holds a header line to the rules that event lines
// follow (json.go): valid UTF-8, no key given twice (encoding/json would
// keep the last one silently), and no null (encoding/json would leave the
// field at its zero value, so "executor":null would read as "" and
// "config":{"local-cap":null} as 0). It looks at the top-level object and at
// config, the one nested object of a header.
func checkHeaderSyntax(line []byte) error {
	if !utf8.Valid(line) {
		i := 0
		for i < len(line) {
			r, n := utf8.DecodeRune(line[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return errf(ErrSyntax, fmt.Sprintf("header: invalid UTF-8 at byte %d (a trace is UTF-8 text)", i+1))
	}
	var top map[string]json.RawMessage
	if err := checkObject(line, "", &top); err != nil {
		return err
	}
	if raw, ok := top["config"]; ok {
		if err := checkObject(raw, "config.", nil); err != nil {
			return err
		}
	}
	return nil
}

// checkObject walks the JSON object in b, rejecting a repeated key or a
// null value; when into is not nil it also returns the raw values by key.
// b must already be valid JSON (the caller decoded it) unless it is
// config, whose own errors the strict decode reports.
func checkObject(b []byte, prefix string, into *map[string]json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil // the decode that follows names the syntax error
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil // not an object: the decode that follows says so
	}
	seen := map[string]bool{}
	if into != nil {
		*into = map[string]json.RawMessage{}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		if seen[key] {
			return errf(ErrSyntax, fmt.Sprintf("header: key %q given twice", prefix+key))
		}
		if len(seen) >= 1024 {
			return errf(ErrRange, "header: more than 1024 keys")
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil
		}
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return errf(ErrUnknown, fmt.Sprintf("header: %s is null, want %s", prefix+key, headerWant(prefix+key)))
		}
		if into != nil {
			(*into)[key] = raw
		}
	}
	return nil
}

// headerWant says what a header field holds, for messages.
func headerWant(key string) string {
	switch key {
	case "format":
		return fmt.Sprintf("%q", Format)
	case "version":
		return fmt.Sprintf("%d", Version)
	case "executor", "policy":
		return "a string"
	case "workers":
		return fmt.Sprintf("a number from 1 to %d", MaxWorkers)
	case "config":
		return "an object of numbers"
	case "minor":
		return "0 or 1"
	case "order":
		return `"seq" or "intervals"`
	case "unobserved":
		return "an array of names (take, source, queue, outcome, park)"
	}
	return "a number"
}
