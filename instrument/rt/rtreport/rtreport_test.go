package rtreport

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestWhere: the first frame of the program, past the runtime, package rt
// and its sync types, a panic and the debug package's own frame.
func TestWhere(t *testing.T) {
	stack := strings.Join([]string{
		"goroutine 7 [running]:",
		"runtime/debug.Stack()", "\t/go/src/runtime/debug/stack.go:26 +0x5e",
		"github.com/execspec/execspec/instrument/rt.(*run).park(0xc0001)", "\t/m/instrument/rt/sched.go:640 +0x1a",
		"github.com/execspec/execspec/instrument/rt/rtstd.(*Mutex).Lock(0xc0002)", "\t/m/instrument/rt/rtstd/sync.go:40 +0x2b",
		"example.com/pool.(*Pool).Submit(0xc0003)", "\t/m/pool/pool.go:88 +0x44",
		"created by example.com/pool.New in goroutine 1", "\t/m/pool/pool.go:20 +0x99",
	}, "\n")
	if got, want := Where(stack), "/m/pool/pool.go:88"; got != want {
		t.Errorf("Where = %q, want %q", got, want)
	}
	if got := Where("goroutine 1 [running]:\nruntime.gopark()\n\t/go/src/runtime/proc.go:1 +0x1"); got != "?" {
		t.Errorf("Where of a stack with no frame of the program = %q, want ?", got)
	}
}

// TestHangError: errors.Is tells a deadlock from a leak, and the message
// names each goroutine with its operation and place.
func TestHangError(t *testing.T) {
	dead := &HangError{Steps: 12, Blocked: []Blocked{{G: 2, Op: "chan receive", Where: "p.go:3"}, {G: Uncontrolled, Op: "Mutex.Lock", Where: "q.go:9"}}}
	leak := &HangError{Leak: true, Steps: 5, Blocked: []Blocked{{G: 1, Op: "select", Where: "p.go:7"}}}
	err := fmt.Errorf("run 3: %w", dead)
	if !errors.Is(err, ErrDeadlock) || errors.Is(err, ErrLeak) || !errors.Is(leak, ErrLeak) || errors.Is(leak, ErrDeadlock) {
		t.Fatal("errors.Is does not tell a deadlock from a leak")
	}
	for _, s := range []string{"deadlock after 12 steps", "goroutine 2: chan receive at p.go:3", "uncontrolled goroutine: Mutex.Lock at q.go:9"} {
		if !strings.Contains(dead.Error(), s) {
			t.Errorf("%q lacks %q", dead.Error(), s)
		}
	}
	if !strings.Contains(leak.Error(), "goroutine leak: the test returned and 1 goroutine(s) never end") {
		t.Errorf("leak: %q", leak.Error())
	}
}
