package rapidrun

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// TB is the rapid.TB of a check run outside a test's own rapid.Check
// loop: it keeps what rapid reports instead of printing it, and turns
// FailNow (and SkipNow) into a panic of ErrFailNow, which the caller
// recovers. Safe for concurrent use.
type TB struct {
	name   string
	mu     sync.Mutex
	failed bool
	out    strings.Builder
}

// ErrFailNow is the panic of TB's FailNow.
var ErrFailNow = errors.New("properties: rapid stopped the check")

// NewTB returns a TB named name.
func NewTB(name string) *TB { return &TB{name: name} }

func (tb *TB) Helper()      {}
func (tb *TB) Name() string { return tb.name }
func (tb *TB) Logf(format string, args ...any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	fmt.Fprintf(&tb.out, format+"\n", args...)
}
func (tb *TB) Log(args ...any) { tb.Logf("%s", fmt.Sprint(args...)) }
func (tb *TB) Errorf(format string, args ...any) {
	tb.Logf(format, args...)
	tb.Fail()
}
func (tb *TB) Error(args ...any) { tb.Errorf("%s", fmt.Sprint(args...)) }
func (tb *TB) Fatalf(format string, args ...any) {
	tb.Errorf(format, args...)
	tb.FailNow()
}
func (tb *TB) Fatal(args ...any) { tb.Fatalf("%s", fmt.Sprint(args...)) }
func (tb *TB) FailNow() {
	tb.Fail()
	panic(ErrFailNow)
}
func (tb *TB) Fail() {
	tb.mu.Lock()
	tb.failed = true
	tb.mu.Unlock()
}
func (tb *TB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failed
}
func (tb *TB) Skipf(format string, args ...any) { tb.Logf(format, args...); tb.SkipNow() }
func (tb *TB) Skip(args ...any)                 { tb.Log(args...); tb.SkipNow() }
func (tb *TB) SkipNow()                         { panic(ErrFailNow) }

// Output is what rapid reported.
func (tb *TB) Output() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.out.String()
}
