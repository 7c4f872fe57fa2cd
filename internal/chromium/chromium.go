// Package chromium runs a headless Chromium for the tests that check a
// page execspec draws (a trace's timeline) in a real browser:
//
//	dom := chromium.Run(t, "timeline.html", "--dump-dom")
//
// Without a Chromium the test is skipped, unless the environment variable
// CI is set: there it fails, so that a CI machine cannot pass by lacking the
// browser.
package chromium

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Bin returns the path of a Chromium, or skips the test (fails it where CI
// is set).
func Bin(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI is set but no chromium is installed: install Debian's chromium package (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); the page is not checked in a browser")
	return ""
}

// Run runs headless Chromium, with a profile of its own in a temporary
// directory and within a minute, on file with the arguments args
// (--dump-dom, --screenshot=…, --window-size=…), and returns what it
// printed; a failure fails the test with Chromium's stderr.
func Run(t testing.TB, file string, args ...string) []byte {
	t.Helper()
	bin := Bin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, bin, append(all, "file://"+file)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.Bytes()
}
