// Package lib is code under test for the test-timer rule: Sum is slow
// but correct (a worker of many steps, with housekeeping on a timer of
// its own), Fetch has a real bug that needs its own timeout to expire
// before its worker runs.
package lib

import (
	"sync"
	"time"
)

// Sum adds 1..n on a worker goroutine, one locked step at a time, while
// a housekeeping goroutine wakes every millisecond (a timer of the
// library's, which may fire early); the result arrives on the channel,
// always.
func Sum(n int) <-chan int {
	var mu sync.Mutex
	total := 0
	out := make(chan int, 1)
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				mu.Lock()
				_ = total
				mu.Unlock()
			case <-stop:
				return
			}
		}
	}()
	go func() {
		for i := 1; i <= n; i++ {
			mu.Lock()
			total += i
			mu.Unlock()
		}
		close(stop)
		out <- total
	}()
	return out
}

// Fetch asks a worker for a value and gives up after 10 ms. The bug: the
// worker sends on an unbuffered channel, so once Fetch gave up, the
// worker blocks for good (a leak). It needs the timeout to expire while
// the worker could still run: without early timers the worker always
// wins.
func Fetch() (int, bool) {
	res := make(chan int)
	go func() {
		v := 0
		for i := range 3 {
			v += i
		}
		res <- v
	}()
	select {
	case v := <-res:
		return v, true
	case <-time.After(10 * time.Millisecond):
		return 0, false
	}
}
