package properties

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control"
)

// The suite calls code it does not trust: the user's constructor and the
// executor's methods. What it does when they misbehave:
//
//	constructor nil, returns nil, panics   the run fails at once with that message
//	Spawn, Wait, Close or Join panics      a violation of the case (exactly-once), with the panic's value
//	Close of a fresh executor never returns the run fails after probeClose
//	Close at the end of a case never returns the case is a hang (the watcher), the executor abandoned

// probeClose bounds how long the suite waits for Close of an executor it
// made only to look at (which abilities it has), before a case.
var probeClose = 10 * time.Second

// fresh calls newExecutor once and returns the executor, or why the suite
// cannot use the constructor: nil, a panic, or a nil executor (a nil
// interface or a nil pointer in one).
func fresh(newExecutor func() executor.Executor) (ex executor.Executor, err error) {
	if newExecutor == nil {
		return nil, errors.New("properties: the executor constructor is nil")
	}
	defer func() {
		if x := recover(); x != nil {
			ex, err = nil, fmt.Errorf("properties: the executor constructor panicked: %v", x)
		}
	}()
	ex = newExecutor()
	if ex == nil {
		return nil, errors.New("properties: the executor constructor returned nil")
	}
	if v := reflect.ValueOf(ex); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("properties: the executor constructor returned a nil %T", ex)
	}
	return ex, nil
}

// guard runs f, one call into the executor, and returns a panic in it as
// a *callPanic that names what was called. The controller's abort, which
// unwinds a controlled run's goroutines when it stops, is not the
// executor's: it goes on unwinding.
func guard(what string, f func() error) (err error) {
	defer func() {
		if x := recover(); x != nil {
			if control.IsAbort(x) || rt.IsAbort(x) {
				panic(x)
			}
			err = &callPanic{what: what, value: x}
		}
	}()
	return f()
}

// callPanic is a panic in a method of the executor.
type callPanic struct {
	what  string
	value any
}

func (p *callPanic) Error() string {
	return fmt.Sprintf("the executor's %s panicked: %v", p.what, p.value)
}

// closeWithin closes ex, waiting at most d: a Close that panics or does
// not return in time is an error (the executor is then abandoned, its
// goroutines leak); what Close itself returns is not looked at.
func closeWithin(ex executor.Executor, d time.Duration) error {
	done := make(chan error, 1)
	go func() {
		done <- guard("Close", func() error { _ = ex.Close(); return nil })
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("Close of %T did not return within %v", ex, d)
	}
}

// probeConstructor makes one executor with newExecutor and closes it, as
// the suite does before its cases: the error says why the constructor or
// its executor's Close cannot be used.
func probeConstructor(newExecutor func() executor.Executor) error {
	ex, err := fresh(newExecutor)
	if err != nil {
		return err
	}
	if err := closeWithin(ex, probeClose); err != nil {
		return fmt.Errorf("properties: a fresh executor: %w", err)
	}
	return nil
}
