package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHostileOutputNodes: every output flag, pointed at a character
// device, a named pipe nobody reads or a symbolic link, leaves the node as
// it was: a device is written in place (never replaced by a regular file),
// a pipe without a reader and a link are refused with exit 2 and a
// message naming the path. The nodes are made in a temporary directory.
func TestHostileOutputNodes(t *testing.T) {
	wd, _ := os.Getwd()
	ok := filepath.Join(wd, "testdata", "check", "conforms.jsonl")
	lin := filepath.Join(wd, "testdata", "lin", "fifo_out_of_order.jsonl")
	for _, c := range []struct {
		name string
		args func(out string) []string
		code int // exit code when the output is a device
		rss  int64
		fail int // exit code when the output is refused (model keeps its verdict)
	}{
		{"check --html", func(o string) []string { return []string{"check", "--html", o, ok} }, exitHolds, hostileRSS, exitUsage},
		{"check --chrome", func(o string) []string { return []string{"check", "--chrome", o, ok} }, exitHolds, hostileRSS, exitUsage},
		{"check --lin-html", func(o string) []string { return []string{"check", "--linearizability", "--lin-html", o, lin} }, exitViolated, hostileRSS, exitViolated},
		{"replay --html", func(o string) []string { return []string{"replay", "--html", o, ok} }, exitHolds, hostileRSS, exitUsage},
		{"model --result", func(o string) []string {
			return []string{"model", "-q", "--workers", "2", "--tasks", "2", "--bitstate", "1", "--swarm", "1/2", "--result", o}
		}, exitUnknown, hostileRSSBig, exitUsage},
		{"cover --html", func(o string) []string {
			return []string{"cover", "-q", "--executor", "fifo", "--strategy", "random", "--runs", "5", "--html", o}
		}, exitHolds, hostileRSSBig, exitUsage},
		{"model --out", func(o string) []string {
			// The counterexample's page is the node.
			dir := filepath.Dir(o)
			os.Rename(o, filepath.Join(dir, "lost-wakeup-no-lost-wakeup.html"))
			return []string{"model", "-q", "--variant", "lost-wakeup", "--out", dir}
		}, exitViolated, hostileRSSBig, exitViolated},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, kind := range []string{"device", "pipe", "link"} {
				dir := t.TempDir()
				node := filepath.Join(dir, "out")
				victim := filepath.Join(t.TempDir(), "victim")
				os.WriteFile(victim, []byte("keep"), 0o644)
				var err error
				switch kind {
				case "device":
					err = syscall.Mknod(node, syscall.S_IFCHR|0o666, 1<<8|3) // a null device
				case "pipe":
					err = syscall.Mkfifo(node, 0o600)
				case "link":
					err = os.Symlink(victim, node)
				}
				if err != nil {
					t.Skipf("making a %s: %v", kind, err)
				}
				args := c.args(node)
				if c.name == "model --out" {
					node = filepath.Join(dir, "lost-wakeup-no-lost-wakeup.html")
				}
				r := runVerify(t, wd, args...)
				r.clean(t, c.rss)
				st, err := os.Lstat(node)
				if err != nil {
					t.Fatalf("%s: the node is gone: %v", kind, err)
				}
				switch kind {
				case "device":
					if st.Mode()&os.ModeCharDevice == 0 {
						t.Errorf("the device became %v", st.Mode())
					}
					if r.code != c.code {
						t.Errorf("onto a device: exit %d, want %d\n%s\n%s", r.code, c.code, r.stdout, r.stderr)
					}
				case "pipe":
					if st.Mode()&os.ModeNamedPipe == 0 {
						t.Errorf("the pipe became %v", st.Mode())
					}
					if r.code != c.fail || !strings.Contains(r.stderr, "nobody reads") || !strings.Contains(r.stderr, node) {
						t.Errorf("onto a pipe nobody reads: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
					}
				case "link":
					if st.Mode()&os.ModeSymlink == 0 {
						t.Errorf("the link became %v", st.Mode())
					}
					if b, _ := os.ReadFile(victim); string(b) != "keep" {
						t.Errorf("the link's target was written")
					}
					if r.code != c.fail || !strings.Contains(r.stderr, "symbolic link") {
						t.Errorf("onto a link: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
					}
				}
				if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
					t.Errorf("%s: temporary files left: %v", kind, left)
				}
			}
		})
	}
}
