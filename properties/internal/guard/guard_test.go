package guard

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
)

// stuck is an executor whose Close never returns.
type stuck struct{ executor.Executor }

func (stuck) Close() error { select {} }

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
	if err := CloseWithin(stuck{}, 20*time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not return within") {
		t.Errorf("a Close that never returns: %v", err)
	}
}
