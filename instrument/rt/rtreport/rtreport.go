// Package rtreport is how the controlled runtime (package rt) tells a
// failed run: a panic of a controlled goroutine (PanicError), a hang
// (HangError: a deadlock, or a leak once the test's body returned) with
// each goroutine found blocked (Blocked), and the file:line in the
// program where a goroutine's stack says it stopped (Where). Package rt
// names these types as its own (rt.HangError is rtreport.HangError).
package rtreport

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"
)

// PanicError is a panic in a controlled goroutine, with its stack.
type PanicError struct {
	G     int
	Steps int
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("goroutine %d panicked after %d steps: %v\n%s", e.G, e.Steps, e.Value, e.Stack)
}

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Blocked is a goroutine found blocked for good: its operation, where it
// was called, and its stack.
type Blocked struct {
	G     int // Uncontrolled: a goroutine that does not hold control
	Op    string
	Where string // file:line of the blocking operation in the program
	Stack string
}

// Uncontrolled is Blocked.G of a goroutine that does not hold control
// (started by code that was not rewritten).
const Uncontrolled = -1

// Name is how a report names the goroutine: "goroutine N", or
// "uncontrolled goroutine".
func (g Blocked) Name() string {
	if g.G == Uncontrolled {
		return "uncontrolled goroutine"
	}
	return fmt.Sprintf("goroutine %d", g.G)
}

// HangError is a run in which every controlled goroutine left was blocked
// and nothing (no timer, no uncontrolled goroutine) woke one within the
// horizon: a deadlock while the body had not returned, a leak once it had.
type HangError struct {
	Leak    bool
	Steps   int
	Blocked []Blocked
	// Housekeeping names the goroutines that only tickers woke, when the
	// hang was decided past them, and Quiet how long they ran alone.
	Housekeeping []int
	Quiet        time.Duration
}

// ErrDeadlock and ErrLeak are matched by errors.Is on a *HangError.
var (
	ErrDeadlock = errors.New("deadlock")
	ErrLeak     = errors.New("goroutine leak")
)

// Is makes errors.Is(err, ErrDeadlock) and errors.Is(err, ErrLeak) work.
func (e *HangError) Is(target error) bool {
	return (target == ErrLeak && e.Leak) || (target == ErrDeadlock && !e.Leak)
}

func (e *HangError) Error() string {
	var b strings.Builder
	if e.Leak {
		fmt.Fprintf(&b, "goroutine leak: the test returned and %d goroutine(s) never end (after %d steps)", len(e.Blocked), e.Steps)
	} else if e.Housekeeping == nil {
		fmt.Fprintf(&b, "deadlock after %d steps: every goroutine is blocked and no timer is pending", e.Steps)
	} else {
		fmt.Fprintf(&b, "deadlock after %d steps: every goroutine is blocked but for housekeeping", e.Steps)
	}
	if e.Housekeeping != nil {
		fmt.Fprintf(&b, " (goroutines %v, woken only by tickers, ran alone for %v of virtual time)", e.Housekeeping, e.Quiet)
	}
	for _, g := range e.Blocked {
		fmt.Fprintf(&b, "\n\t%s: %s at %s", g.Name(), g.Op, g.Where)
	}
	return b.String()
}

// Where returns the file:line of the first frame of a stack (debug.Stack
// text) that is not in package rt (nor rtstd), the runtime or the
// scheduler's plumbing.
func Where(stack string) string {
	lines := strings.Split(stack, "\n")
	for i := 1; i+1 < len(lines); i += 2 {
		fn := lines[i]
		if strings.HasPrefix(fn, "runtime/debug.") || strings.HasPrefix(fn, "github.com/execspec/execspec/instrument/rt.") || strings.HasPrefix(fn, "github.com/execspec/execspec/instrument/rt/rtstd.") || strings.HasPrefix(fn, "panic(") || strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "sync.") || strings.HasPrefix(fn, "created by ") {
			continue
		}
		loc := strings.TrimSpace(lines[i+1])
		if j := strings.LastIndex(loc, " +0x"); j >= 0 {
			loc = loc[:j]
		}
		return loc
	}
	return "?"
}

// AllStacks returns the stacks of every goroutine of the process.
func AllStacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
