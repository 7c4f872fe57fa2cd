// Package clitest runs verify's subcommands in the tests of their
// packages as verify runs them, and checks what they print.
package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
)

// Dispatch is how a test runs verify: main's dispatch, or Commands.
type Dispatch func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// Commands returns a Dispatch of cmds: args[0] names the command, which
// runs with the rest, its help (-h) on stdout as verify prints it.
func Commands(cmds ...cli.Command) Dispatch {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		for _, c := range cmds {
			if len(args) == 0 || c.Name != args[0] {
				continue
			}
			if cli.HelpAsked(args[1:]) {
				return c.Run(ctx, args[1:], stdout, stdout)
			}
			return c.Run(ctx, args[1:], stdout, stderr)
		}
		fmt.Fprintf(stderr, "clitest: no command %q\n", args)
		return cli.ExitUsage
	}
}

// Run runs verify with args and returns its exit code, stdout and stderr.
func (d Dispatch) Run(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := d(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// RunJSON runs verify with args, wants exit code want and one JSON object
// on stdout, and returns it decoded, and stdout for messages.
func RunJSON[T any](t testing.TB, d Dispatch, want int, args ...string) (T, string) {
	t.Helper()
	code, out, errs := d.Run(t, args...)
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != want {
		t.Fatalf("verify %s: exit %d, want %d; %v\n%s%s", strings.Join(args, " "), code, want, err, out, errs)
	}
	return v, out
}

// WantAll fails t for each of wants that text, the output named name,
// does not contain.
func WantAll(t testing.TB, name, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", name, w, text)
		}
	}
}

// TestData is the path of elem under cmd/verify/testdata, relative to
// the working directory of whichever package's test runs.
func TestData(elem ...string) string {
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(append([]string{filepath.Dir(file), "..", "..", "testdata"}, elem...)...)
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil {
			return rel
		}
	}
	return p
}

// TempCache points the user's cache directory (XDG_CACHE_HOME), where
// verify writes the files no flag places, at a new temporary directory,
// and returns the function that removes it: the tests' files go there.
func TempCache() (remove func()) {
	cache, err := os.MkdirTemp("", "verify-cache-")
	if err != nil {
		return func() {}
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	return func() { os.RemoveAll(cache) }
}

// Main runs m's tests with TempCache and returns their exit code: a
// TestMain of verify's packages is os.Exit(clitest.Main(m)).
func Main(m *testing.M) int {
	remove := TempCache()
	defer remove()
	return m.Run()
}

// FuzzFlags fuzzes a subcommand's flags from seeds (command lines without
// the subcommand): accepted parses and validates args into fresh flags
// and returns "" when validation refuses them or they lie in the
// documented ranges, and else what lies outside, which fails the test.
// Parsing and validating must never panic either.
func FuzzFlags(f *testing.F, accepted func(args []string) string, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if bad := accepted(strings.Fields(line)); bad != "" {
			t.Fatalf("accepted %q: %s", line, bad)
		}
	})
}
