package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// A bitstate filter too large for the flag's range or for the machine is a
// usage error with the reason, never a crash (the filter is allocated at
// once, and MiB << 20 must not wrap around).
func TestBitstateTooLarge(t *testing.T) {
	cases := []struct{ mb, want string }{
		{"17592186044417", "want at most 1048576"}, // 2^44 + 1: wraps to 1 MiB in bytes
	}
	// 1 TiB, where the machine has less (else the test would allocate it).
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kib int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kib); err == nil && kib < 1<<29 {
			cases = append(cases, struct{ mb, want string }{"1048576", "this machine's memory"})
		}
	}
	for _, tc := range cases {
		code, out, stderr := run(t, "model", "-q", "--workers", "2", "--tasks", "2", "--bitstate", tc.mb)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("--bitstate %s: exit %d, want %d with %q\n%s%s", tc.mb, code, exitUsage, tc.want, out, stderr)
		}
	}
}

// A bitstate search stopped by a budget claims no coverage: the share of
// the states it met that it kept (100 %) is not the share of the reachable
// states it searched.
func TestBitstateStoppedClaimsNoCoverage(t *testing.T) {
	code, out, stderr := run(t, "model", "-q", "--workers", "3", "--tasks", "4", "--pendings", "2", "--bitstate", "1", "--max-states", "1000")
	if code != exitUnknown || strings.Contains(out, "coverage estimate") || !strings.Contains(out, "how much of the reachable state space that is is unknown") {
		t.Errorf("exit %d\n%s%s", code, out, stderr)
	}
}
