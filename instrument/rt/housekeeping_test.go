package rt

import (
	"testing"
	"time"
	"unsafe"
)

func TestPeriodOffsetFound(t *testing.T) {
	if periodOffset < 0 {
		t.Fatal("the period of the runtime's timers was not found: housekeeping is not recognised")
	}
	tk := time.NewTicker(time.Second)
	defer tk.Stop()
	tm := time.NewTimer(time.Second)
	defer tm.Stop()
	if !isTicker(hchanOf(unsafe.Pointer(&tk.C))) || isTicker(hchanOf(unsafe.Pointer(&tm.C))) {
		t.Fatal("a ticker and a timer not told apart")
	}
}
