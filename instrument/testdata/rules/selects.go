package selects

import (
	"fmt"
	"time"
)

// Program uses select in every form: receive with and without ok,
// assignment, send, default, a label with break and continue, and a
// timeout.
func Program() string {
	out := ""
	a := make(chan int)
	b := make(chan int, 1)
	quit := make(chan bool)
	go func() {
		for i := range 4 {
			a <- i
		}
		close(a)
	}()
	var got int
	n := 0
loop:
	for {
		select {
		case v, ok := <-a:
			if !ok {
				break loop
			}
			if v == 1 {
				continue loop
			}
			n += v
		case got = <-b:
			out += "b"
		}
	}
	select {
	case b <- 7:
		out += "sent"
	default:
		out += "full"
	}
	select {
	case <-quit:
		out += "quit"
	default:
		out += "default"
	}
	select {
	case <-quit:
	case <-time.After(time.Millisecond):
		out += "timeout"
	}
outer:
	select {
	case x := <-b:
		if x == 7 {
			break outer
		}
		out += "unreachable"
	}
	b <- 9
	return fmt.Sprint(out, n, got, first(quit, b))
}

// first ends in a select whose every case returns: the rewritten switch
// must still be a terminating statement.
func first(a <-chan bool, b <-chan int) int {
	select {
	case <-a:
		return -1
	case v := <-b:
		return v
	}
}
