package main

import (
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "version")
	if code != exitHolds || !strings.Contains(out, "github.com/execspec/execspec") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("exit %d: %q", code, out)
	}
	v, out := runJSON[versionInfo](t, exitHolds, "version", "--json")
	if v.Schema != jsonSchema || v.Go != runtime.Version() || v.Version == "" {
		t.Errorf("%q", out)
	}
}

// Help asked for goes to stdout with exit 0, for verify itself and for
// every subcommand, -h and --help alike; a bad flag's usage goes to stderr.
func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"check", "-h"}, {"check", "--help"}, {"model", "-h"}, {"cover", "--help"}, {"merge", "-h"}, {"replay", "-h"}, {"run", "-h"}, {"version", "-h"}} {
		code, out, errs := run(t, args...)
		if code != exitHolds || !strings.Contains(strings.ToLower(out), "usage") || errs != "" {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errs)
		}
	}
	if code, out, errs := run(t, "check", "--nosuch"); code != exitUsage || out != "" || !strings.Contains(errs, "Usage") {
		t.Errorf("a bad flag: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
