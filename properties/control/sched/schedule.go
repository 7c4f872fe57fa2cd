package sched

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Schedule is the record of one controlled run: its decisions, the number
// of yield points, and a checksum of what happened. The checksum is FNV-1a
// over 64-bit words of the run's events: each step (goroutine, point), each
// Go (parent, child), each return of a goroutine, and each value passed to
// Note. Two runs with the same Schedule and checksum took the same steps in
// the same order and noted the same values.
//
// The text form (MarshalText) is small and diffable:
//
//	execspec-schedule v2
//	steps 212
//	checksum 9f3c0d1e2a4b5c6d
//	choices 3
//	0/2 1/3! 0/2
//
// where i/n is choice i of n runnable goroutines and ! marks a preemption.
// Choices are written 32 to a line.
//
// A Schedule is a value; the zero Schedule is the schedule of a run with
// no decisions and no steps.
type Schedule struct {
	Choices  []Choice
	Steps    int
	Checksum uint64
	// Version is the format version the schedule was made under: 0 (the
	// current one, Version) or 1, read from a file written before
	// version 2. Version 2 changed what a run of instrumented code
	// chooses: a loop that only yields (runtime.Gosched alone, in a loop
	// that touches nothing another goroutine can reach: a spin lock's
	// backoff) yields once rather than at every iteration. A version 1
	// schedule replays with such loops yielding at every iteration, as
	// they did when it was made (instrument/rt); the built-in
	// executors' controller chooses the same way under both.
	Version int
}

// Version is the current format version of schedules.
const Version = 2

// version returns the format version s is written in.
func (s Schedule) version() int {
	if s.Version == 0 {
		return Version
	}
	return s.Version
}

// Preemptions counts the choices that preempted a goroutine that could
// have continued.
func (s Schedule) Preemptions() int {
	n := 0
	for _, c := range s.Choices {
		if c.Preempt {
			n++
		}
	}
	return n
}

// scheduleMagic is the first line of a schedule of format version v.
func scheduleMagic(v int) string { return "execspec-schedule v" + strconv.Itoa(v) }

// MarshalText writes the text form of s, in its format version.
func (s Schedule) MarshalText() ([]byte, error) {
	v := s.version()
	if v < 1 || v > Version {
		return nil, fmt.Errorf("%w: format version %d: expected 1 to %d", ErrScheduleSyntax, v, Version)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nsteps %d\nchecksum %016x\nchoices %d\n", scheduleMagic(v), s.Steps, s.Checksum, len(s.Choices))
	for i, c := range s.Choices {
		if i > 0 {
			if i%32 == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(strconv.Itoa(c.Index))
		b.WriteByte('/')
		b.WriteString(strconv.Itoa(c.Of))
		if c.Preempt {
			b.WriteByte('!')
		}
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// ErrScheduleSyntax is wrapped by the errors of UnmarshalText.
var ErrScheduleSyntax = errors.New("bad schedule")

// UnmarshalText parses the text form of a Schedule. Errors wrap
// ErrScheduleSyntax and name the line.
func (s *Schedule) UnmarshalText(text []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: line %d: %s", ErrScheduleSyntax, line, fmt.Sprintf(format, args...))
	}
	next := func() (string, bool) {
		for sc.Scan() {
			line++
			t := strings.TrimSpace(sc.Text())
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			return t, true
		}
		return "", false
	}
	header := func(key string) (string, error) {
		t, ok := next()
		if !ok {
			line++
			return "", bad("missing %q line", key)
		}
		k, v, _ := strings.Cut(t, " ")
		if k != key {
			return "", bad("expected %q, found %q", key, t)
		}
		return strings.TrimSpace(v), nil
	}
	t, ok := next()
	if !ok {
		line++
		return bad("empty: expected %q", scheduleMagic(Version))
	}
	version := 0
	for v := 1; v <= Version; v++ {
		if t == scheduleMagic(v) {
			version = v
		}
	}
	if version == 0 {
		if strings.HasPrefix(t, "execspec-schedule v") {
			return bad("%q: this build reads schedule format versions 1 to %d (%q); a newer execspec wrote it", t, Version, scheduleMagic(Version))
		}
		return bad("expected %q, found %q", scheduleMagic(Version), t)
	}
	v, err := header("steps")
	if err != nil {
		return err
	}
	steps, err := strconv.Atoi(v)
	if err != nil || steps < 0 {
		return bad("steps: expected a count, found %q", v)
	}
	if v, err = header("checksum"); err != nil {
		return err
	}
	sum, err := strconv.ParseUint(v, 16, 64)
	if err != nil {
		return bad("checksum: expected 16 hex digits, found %q", v)
	}
	if v, err = header("choices"); err != nil {
		return err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1<<24 {
		return bad("choices: expected a count, found %q", v)
	}
	choices := make([]Choice, 0, min(n, 4096))
	for len(choices) < n {
		t, ok := next()
		if !ok {
			line++
			return bad("expected %d choices, found %d", n, len(choices))
		}
		for _, f := range strings.Fields(t) {
			var c Choice
			if strings.HasSuffix(f, "!") {
				c.Preempt = true
				f = f[:len(f)-1]
			}
			is, ofs, ok := strings.Cut(f, "/")
			i, err1 := strconv.Atoi(is)
			of, err2 := strconv.Atoi(ofs)
			if !ok || err1 != nil || err2 != nil || i < 0 || of < 2 || i >= of {
				return bad("expected a choice i/n with 0 ≤ i < n and n ≥ 2, found %q", f)
			}
			c.Index, c.Of = i, of
			choices = append(choices, c)
		}
		if len(choices) > n {
			return bad("more choices than the %d announced", n)
		}
	}
	if t, ok := next(); ok {
		return bad("unexpected %q after the choices", t)
	}
	s.Choices, s.Steps, s.Checksum, s.Version = choices, steps, sum, version
	if version == Version {
		s.Version = 0
	}
	return nil
}

// Save writes s to path in its text form, creating the directory. The file
// is written whole (a temporary file renamed over path) and never through
// a symbolic link, a directory or any other non-regular file at path (the
// directory may be a shared one).
func (s Schedule) Save(path string) error { return s.SaveCommented(path, nil) }

// SaveCommented is Save with comment lines ("# " and each of comments)
// before the schedule, which its reader skips: where a suite keeps what
// it needs to rerun the case beside the choices. A comment with a line
// break is refused.
func (s Schedule) SaveCommented(path string, comments []string) error {
	var b []byte
	for _, c := range comments {
		if strings.ContainsAny(c, "\r\n") {
			return fmt.Errorf("control: saving schedule: comment %q has a line break", c)
		}
		b = append(append(append(b, "# "...), c...), '\n')
	}
	fail := func(err error) error { return fmt.Errorf("control: saving schedule: %w", err) }
	text, err := s.MarshalText()
	if err != nil {
		return fail(err)
	}
	b = append(b, text...)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fail(err)
	}
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return fail(fmt.Errorf("%s is not a regular file (%v): neither followed nor replaced", path, st.Mode().Type()))
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fail(err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fail(err)
	}
	return nil
}

// TestdataPath returns where a test's failing schedule is kept:
// testdata/schedules/<test name>.schedule, relative to the package under
// test (go test's working directory), with the characters of subtest names
// that do not belong in a file name replaced by '_'.
func TestdataPath(testName string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, testName)
	return filepath.Join("testdata", "schedules", name+".schedule")
}

// Load reads a Schedule saved with Save.
func Load(path string) (Schedule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Schedule{}, fmt.Errorf("control: loading schedule: %w", err)
	}
	var s Schedule
	if err := s.UnmarshalText(b); err != nil {
		return Schedule{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
