package gostmt

import (
	"fmt"
	"sort"
	"sync"
)

type acc struct {
	mu  sync.Mutex
	got []string
}

func (a *acc) add(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, s)
}

func show(a *acc, wg *sync.WaitGroup, s string, n int64) {
	defer wg.Done()
	a.add(fmt.Sprint(s, n))
}

func variadic(a *acc, wg *sync.WaitGroup, xs ...int) {
	defer wg.Done()
	a.add(fmt.Sprint(xs))
}

// Program starts goroutines in every form of the go statement; the
// arguments are evaluated where the statement stands.
func Program() string {
	var wg sync.WaitGroup
	a := &acc{}
	x := "x"
	wg.Add(6)
	go show(a, &wg, x, 1) // a constant argument converted to int64
	x = "changed"
	f := show
	go f(a, &wg, x, 2)
	f = nil
	go a.addThenDone(&wg, "method")
	go func(s string) {
		defer wg.Done()
		a.add(s)
	}(x)
	go func() {
		defer wg.Done()
		a.add("literal")
	}()
	xs := []int{1, 2}
	go variadic(a, &wg, xs...)
	wg.Wait()
	sort.Strings(a.got)
	return fmt.Sprint(a.got)
}

func (a *acc) addThenDone(wg *sync.WaitGroup, s string) {
	a.add(s)
	wg.Done()
}
