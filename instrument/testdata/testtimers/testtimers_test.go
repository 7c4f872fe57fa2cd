package testtimers

import (
	"testing"
	"time"

	"testtimers/lib"
)

// TestSum guards a slow but correct computation with the common idiom: a
// timeout of the test's own. The test's timer is never fired early, so
// it never fails, whatever the schedule.
func TestSum(t *testing.T) {
	select {
	case got := <-lib.Sum(20):
		if got != 210 {
			t.Fatalf("Sum(20) = %d, want 210", got)
		}
	case <-time.After(time.Second):
		t.Fatal("Sum(20) did not return within 1s")
	}
}

// TestSumSleep waits for the same computation with a sleep of its own.
func TestSumSleep(t *testing.T) {
	ch := lib.Sum(20)
	time.Sleep(100 * time.Millisecond)
	select {
	case <-ch:
	default:
		t.Fatal("Sum(20) not done after 100ms")
	}
}

// TestFetch calls Fetch under a guard of the test's own: the leak of
// Fetch's worker needs Fetch's own timeout to fire early, which it may.
func TestFetch(t *testing.T) {
	done := make(chan bool, 1)
	go func() {
		_, ok := lib.Fetch()
		done <- ok
	}()
	timer := time.NewTimer(time.Second)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatal("Fetch did not return within 1s")
	}
}
