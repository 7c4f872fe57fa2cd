package isolate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The environment a parent gives its child.
const (
	EnvLog  = "EXECSPEC_POOL_CHILD" // the log file the child appends its records to
	EnvCall = "EXECSPEC_POOL_CALL"  // which call of the test the child runs (Calls)
	EnvSeen = "EXECSPEC_POOL_SEEN"  // the keys the parent already knows, a JSON list
)

// Env is the environment of a child that runs call of the test, appends
// its records to the log at path, and is told the keys seen.
func Env(path string, call int, seen []string) []string {
	js, _ := json.Marshal(seen)
	return append(os.Environ(), EnvLog+"="+path, EnvCall+"="+strconv.Itoa(call), EnvSeen+"="+string(js))
}

// InChild returns, in a child, the path of its log and whether it runs
// call of the test (not: another call of the same test, which a child of
// its own runs); path is "" in a parent.
func InChild(call int) (path string, mine bool) {
	path = os.Getenv(EnvLog)
	return path, os.Getenv(EnvCall) == strconv.Itoa(call)
}

// Seen returns, in a child, the keys its parent already knows.
func Seen() ([]string, error) {
	var seen []string
	if s := os.Getenv(EnvSeen); s != "" {
		if err := json.Unmarshal([]byte(s), &seen); err != nil {
			return nil, fmt.Errorf("%s: %v", EnvSeen, err)
		}
	}
	return seen, nil
}

// calls numbers the calls of each test, so that a child runs the same
// call its parent made.
var calls struct {
	sync.Mutex
	n map[string]int
}

// Calls returns the number (from 1) of this call in the test named name:
// 1 at the test's first call, 2 at its second, and so on. Safe for
// concurrent use.
func Calls(name string) int {
	calls.Lock()
	defer calls.Unlock()
	if calls.n == nil {
		calls.n = map[string]int{}
	}
	calls.n[name]++
	return calls.n[name]
}

// Pattern is a -test.run pattern that selects the test named name
// (subtests included) and nothing else.
func Pattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// Log is the child's side of the log file: records appended as JSON
// lines. Not safe for concurrent use.
type Log struct {
	f   *os.File
	enc *json.Encoder
}

// OpenLog opens the log file at path, which the parent created, for
// appending.
func OpenLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	return &Log{f: f, enc: json.NewEncoder(f)}, nil
}

// Write appends rec as one line, in one write(2): a crash keeps what was
// written.
func (l *Log) Write(rec any) error { return l.enc.Encode(rec) }

// Close closes the log file.
func (l *Log) Close() error { return l.f.Close() }

// Read returns the records of the log file at path, as far as they are
// whole: a line cut by the crash, and what follows it, is left out.
func Read[T any](path string) ([]T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var recs []T
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r T
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			// A line cut by the crash: everything before it stands.
			break
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// maxOutput bounds what Run keeps of a child's output.
const maxOutput = 256 << 10

// Run runs exe with args and env, until it ends or ctx is done, and
// returns the last 256 KiB of what it printed (standard output and
// error together: a crash prints at the end) and how it ended.
func Run(ctx context.Context, exe string, args, env []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = env
	out := &tailBuffer{max: maxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	return out.Bytes(), err
}

// Crash is a crash as Go prints it.
type Crash struct {
	Message string // the first line: "panic: ..." or "fatal error: ..."
	Stack   string // from that line on, at most the last 16 KiB
	Site    string // "crash in <function>" (Site), or "crash"
}

// ParseCrash finds the crash in a process's output; ok is false when it
// printed none (os.Exit, a signal).
func ParseCrash(out []byte) (c Crash, ok bool) {
	text := string(out)
	i := crashStart(text)
	if i < 0 {
		return c, false
	}
	c.Message, _, _ = strings.Cut(text[i:], "\n")
	c.Stack = Tail([]byte(text[i:]), 16<<10)
	c.Site = Site(text[i:])
	return c, true
}

// crashStart finds the line where Go reports a crash.
func crashStart(text string) int {
	for _, marker := range []string{"panic: ", "fatal error: "} {
		if strings.HasPrefix(text, marker) {
			return 0
		}
		if i := strings.Index(text, "\n"+marker); i >= 0 {
			return i + 1
		}
	}
	return -1
}

// rtPrefix names the functions of the controlled runtime and rtStdPrefix
// those of its replacements of sync's types, which stand in for sync's
// in instrumented code.
const (
	rtPrefix    = "github.com/execspec/execspec/instrument/rt."
	rtStdPrefix = "github.com/execspec/execspec/instrument/rt/rtstd."
)

// Site is the first function of the crashing goroutine's stack in text
// that is not the runtime's, sync's or the controlled runtime's (nor the
// panic call itself): where the code went wrong, as "crash in
// <function>"; "crash" when there is none.
func Site(text string) string {
	sc := bufio.NewScanner(strings.NewReader(text))
	inStack := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "goroutine ") {
			inStack = true
			continue
		}
		if !inStack || line == "" || strings.HasPrefix(line, "\t") {
			continue
		}
		fn := line
		if j := strings.LastIndexByte(fn, '('); j > 0 && strings.HasSuffix(fn, ")") {
			fn = fn[:j]
		}
		if fn == "panic" || strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "runtime/debug.") || strings.HasPrefix(fn, "sync.") || strings.HasPrefix(fn, rtPrefix) || strings.HasPrefix(fn, rtStdPrefix) {
			continue
		}
		return "crash in " + fn
	}
	return "crash"
}

// Tail is the last n bytes of b, as a string.
func Tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// tailBuffer keeps the last max bytes written to it: a child's output
// is bounded, and a crash prints at the end.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > 2*w.max {
		w.b = append(w.b[:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailBuffer) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.b) > w.max {
		return w.b[len(w.b)-w.max:]
	}
	return w.b
}
