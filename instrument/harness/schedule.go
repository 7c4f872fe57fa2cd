package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control/sched"
)

// Meta is what a suite keeps beside a saved schedule, inside its file as
// comment lines ("# key: value") that the schedule's format skips: the
// case that ran, the test, the seed. Keys are lower-case words with dots
// and dashes; values are one line each.
type Meta map[string]string

// metaKey is the form of a Meta key.
var metaKey = regexp.MustCompile(`^[a-z][a-z0-9.-]*$`)

// SaveSchedule writes sc to path with meta as comment lines before
// it ("# key: value", keys sorted), whole or not at all. A key not of
// the form [a-z][a-z0-9.-]* or a value with a line break is refused.
func SaveSchedule(path string, sc sched.Schedule, meta Meta) error {
	keys := make([]string, 0, len(meta))
	for k, v := range meta {
		if !metaKey.MatchString(k) {
			return fmt.Errorf("execspec/rt: schedule metadata key %q: expected lower-case letters, digits, dots and dashes", k)
		}
		if strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("execspec/rt: schedule metadata %q: the value has a line break", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	comments := make([]string, len(keys))
	for i, k := range keys {
		comments[i] = k + ": " + meta[k]
	}
	comments = append(comments, rt.ModeComment())
	return sc.SaveCommented(path, comments)
}

// LoadSchedule reads a schedule file and the Meta in its comment lines
// ("# key: value"; other comments are ignored). Errors name the file.
func LoadSchedule(path string) (sched.Schedule, Meta, error) {
	var s sched.Schedule
	data, err := os.ReadFile(path)
	if err != nil {
		return s, nil, fmt.Errorf("execspec/rt: %w", err)
	}
	if err := s.UnmarshalText(data); err != nil {
		return s, nil, fmt.Errorf("%s: %w", path, err)
	}
	meta := Meta{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(line[1:]), ":")
		if ok && metaKey.MatchString(k) {
			meta[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return s, nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := rt.CheckMode(meta); err != nil {
		return s, nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, meta, nil
}

// DefaultOut is where the schedules of failing runs go when Options.Out
// is empty: execspec/schedules in the user's cache directory (beside the
// other files verify keeps), or in the temporary directory where there is
// none.
func DefaultOut() string {
	if base, err := os.UserCacheDir(); err == nil {
		return filepath.Join(base, "execspec", "schedules")
	}
	return filepath.Join(os.TempDir(), "execspec-schedules")
}

// SchedulePath is the file the schedule of a failing run of test is saved
// to in dir ("": DefaultOut()).
func SchedulePath(dir, test string) string {
	if dir == "" {
		dir = DefaultOut()
	}
	return filepath.Join(dir, filepath.Base(sched.TestdataPath(test)))
}
