package main

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/execspec/execspec/internal/testenv"
)

// TestExhaustiveMoby27782: the exhaustive search that reports Moby27782
// leak-free can fail. As Go ships it, readLogs holds the logger's lock
// until followLogs returns, and Close, which closes the watcher that
// followLogs waits on, takes that lock: every schedule within the bound
// ends without a leak. Broken on purpose (readLogs lets the lock go
// before it follows the logs), Close can close the watcher while
// followLogs waits, and followLogs then waits in Remove's Cond.Wait for
// ever: the same search finds that leak.
func TestExhaustiveMoby27782(t *testing.T) {
	testenv.GoBuild(t, "rewrites and builds a kernel")
	held := []byte("\tl.mu.Lock()\n\tdefer l.mu.Unlock()\n\n\tl.readers[logWatcher] = struct{}{}\n")
	released := []byte("\tl.mu.Lock()\n\tl.readers[logWatcher] = struct{}{}\n\tl.mu.Unlock()\n")
	for _, broken := range []bool{false, true} {
		o := options{strategy: "random", runs: 0, seed: 1, only: "^Moby27782$", timeout: 5 * time.Minute, early: true, exhaust: 2, exhaustRuns: 100_000}
		mutated := false
		if broken {
			o.mutate = func(name string, src []byte) []byte {
				if name != "moby27782.go" {
					return src
				}
				mutated = bytes.Contains(src, held)
				return bytes.Replace(src, held, released, 1)
			}
		}
		rs, err := run(o, io.Discard, func(result) {})
		if err != nil {
			t.Fatal(err)
		}
		if broken && !mutated {
			t.Fatal("moby27782.go no longer has readLogs' lock as this test expects")
		}
		if len(rs) != 1 {
			t.Fatalf("broken %v: %d results", broken, len(rs))
		}
		r := rs[0]
		switch {
		case !broken && !r.leakFree():
			t.Errorf("as shipped: want every schedule within 2 preemptions without a leak, got %s: %s", r.status(), r.note())
		case broken && (!r.Found || r.Kind != "leak" || r.Replayed != 10):
			t.Errorf("broken: want a leak replayed 10/10, got %s (replayed %d): %s", r.status(), r.Replayed, r.note())
		}
		t.Logf("broken %v: %s after %d runs: %s", broken, r.status(), r.Runs, r.note())
	}
}
