package guard

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control"
)

// Fresh calls newExecutor once and returns the executor, or why the suite
// cannot use the constructor: nil, a panic, or a nil executor (a nil
// interface or a nil pointer in one).
func Fresh(newExecutor func() executor.Executor) (ex executor.Executor, err error) {
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

// Call runs f, one call into the executor, and returns a panic in it as
// a *Panic that names what was called. The controller's abort, which
// unwinds a controlled run's goroutines when it stops, is not the
// executor's: it goes on unwinding.
func Call(what string, f func() error) (err error) {
	defer func() {
		if x := recover(); x != nil {
			if control.IsAbort(x) || rt.IsAbort(x) {
				panic(x)
			}
			err = &Panic{what: what, value: x}
		}
	}()
	return f()
}

// Panic is a panic in a method of the executor.
type Panic struct {
	what  string
	value any
}

func (p *Panic) Error() string {
	return fmt.Sprintf("the executor's %s panicked: %v", p.what, p.value)
}

// CloseWithin closes ex, waiting at most d: a Close that panics or does
// not return in time is an error (the executor is then abandoned, its
// goroutines leak); what Close itself returns is not looked at.
func CloseWithin(ex executor.Executor, d time.Duration) error {
	done := make(chan error, 1)
	go func() {
		done <- Call("Close", func() error { _ = ex.Close(); return nil })
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
