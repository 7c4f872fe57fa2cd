package maps

import (
	"fmt"
	"sort"
)

type point struct {
	x, y int
}

// Program ranges over maps in every form (the result does not depend on
// the order, which the rewritten program makes the keys').
func Program() string {
	m := map[int]string{1: "a", 2: "b", 3: "c"}
	sum, s := 0, 0
	for k, v := range m {
		sum += k
		s += len(v)
	}
	var keys []int
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	n := 0
	for range m {
		n++
	}
	var k0 int
	var v0 string
	for k0, v0 = range m {
	}
	last := m[k0] == v0
	// An entry deleted before it is reached is not produced.
	seen := 0
	for k := range m {
		seen++
		for j := range m {
			if j != k {
				delete(m, j)
			}
		}
	}
	// Keys of structs; a closure per iteration.
	pts := map[point]int{{1, 2}: 3, {0, 5}: 5, {1, 1}: 2}
	var fs []func() int
	for p, v := range pts {
		fs = append(fs, func() int { return p.x + p.y - v })
	}
	zero := 0
	for _, f := range fs {
		zero += f()
	}
	// break and continue keep their meaning, with a label too.
	found := 0
outer:
	for _, v := range map[string]int{"x": 1, "y": 2, "z": 3} {
		for range 2 {
			if v == 2 {
				found++
				continue outer
			}
			if v > 10 {
				break outer
			}
		}
	}
	return fmt.Sprint(sum, s, keys, n, last, seen, len(m), zero, found)
}
