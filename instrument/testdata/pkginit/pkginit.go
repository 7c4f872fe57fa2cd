// Package pkginit starts a goroutine and builds state at initialisation,
// as a pool library's default pool does.
package pkginit

import "fmt"

// order records the initialisation as it happens.
var order []string

// a depends on b: b is initialised first although declared later.
var a = b + 1

var b = note("b", 2)

// requests reaches the goroutine that initialisation starts: it answers
// each channel it is sent with a count.
var requests = serve()

var x, y = pair()

func note(s string, v int) int {
	order = append(order, s)
	return v
}

func pair() (int, int) { return note("x", 10), 20 }

func serve() chan chan int {
	ch := make(chan chan int)
	go func() {
		n := 0
		for reply := range ch {
			n++
			reply <- n
		}
	}()
	order = append(order, "requests")
	return ch
}

func init() { order = append(order, "init1") }

func init() { order = append(order, "init2") }

// Program reports the initialisation's result.
func Program() string { return fmt.Sprint(order, a, b, x, y) }

// Ask sends a new channel to the goroutine started at initialisation
// and returns its answer.
func Ask() int {
	reply := make(chan int)
	requests <- reply
	return <-reply
}
