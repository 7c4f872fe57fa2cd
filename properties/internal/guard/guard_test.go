package guard

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
)

func TestUntrustedCalls(t *testing.T) {
	var p *Panic
	if err := Call("Spawn", func() error { panic("boom") }); !errors.As(err, &p) || err.Error() != "the executor's Spawn panicked: boom" {
		t.Errorf("a panic in Spawn: %v", err)
	}
	if _, err := Fresh(nil); err == nil || !strings.Contains(err.Error(), "constructor is nil") {
		t.Errorf("a nil constructor: %v", err)
	}
	if _, err := Fresh(func() executor.Executor { return (*executor.FIFO)(nil) }); err == nil || !strings.Contains(err.Error(), "returned a nil") {
		t.Errorf("a nil pointer in the interface: %v", err)
	}
	// A Close that never returns: properties' TestCloseNeverReturns.
	if err := CloseWithin(executor.NewFIFO(), time.Minute); err != nil {
		t.Errorf("a Close that returns: %v", err)
	}
}
