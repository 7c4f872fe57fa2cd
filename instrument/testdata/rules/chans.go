package chans

import "fmt"

// Program passes values through unbuffered and buffered channels, with
// every form of receive, close and range.
func Program() string {
	out := ""
	ch := make(chan int)
	buf := make(chan string, 2)
	done := make(chan struct{})
	go func() {
		for i := range 3 {
			ch <- i
		}
		close(ch)
	}()
	go func() {
		buf <- "a"
		buf <- "b"
		buf <- "c"
		close(buf)
		done <- struct{}{}
	}()
	sum := 0
	for v := range ch {
		sum += v
	}
	var s string
	for s = range buf {
		out += s
	}
	<-done
	v, ok := <-ch
	var w, ok2 = <-buf
	empty := make(chan int)
	close(empty)
	for range empty {
		out += "never"
	}
	return fmt.Sprint(out, sum, s, v, ok, w, ok2)
}

type message interface{ kind() string }

type hello struct{}

func (*hello) kind() string { return "hello" }

// Interface sends a pointer on a channel of an interface type.
func Interface() string {
	ch := make(chan message, 1)
	ch <- &hello{}
	select {
	case ch <- &hello{}:
	default:
	}
	return (<-ch).kind()
}
