package cputime

import (
	"runtime"
	"testing"
)

// TestProcessAdvances: spinning for a while uses CPU time, and the clock
// never goes back.
func TestProcessAdvances(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no getrusage here")
	}
	c0 := Process()
	x := 0
	for i := 0; Process()-c0 < 20e6 && i < 1e9; i++ {
		x += i
	}
	c1 := Process()
	if c1 <= c0 {
		t.Fatalf("CPU time did not advance: %v then %v (x=%d)", c0, c1, x)
	}
}
