package rtstd

import (
	"math"
	"slices"
	"testing"
)

// TestMapOrder: the iterators produce a map's entries in the order of
// the keys, skip entries deleted before they are reached, produce the
// current value, and produce a NaN key once.
func TestMapOrder(t *testing.T) {
	m := map[string]int{"c": 3, "a": 1, "d": 4, "b": 2}
	var got []string
	for k, v, it := MapOrdered(m).Start(); it.Next(&k, &v); {
		got = append(got, k)
		if k == "a" {
			delete(m, "c")
			m["d"] = 40
		}
		if k == "d" && v != 40 {
			t.Errorf("d: %d, want the value when reached (40)", v)
		}
	}
	if !slices.Equal(got, []string{"a", "b", "d"}) {
		t.Errorf("order %v, want [a b d]", got)
	}
	type key struct {
		a int
		b string
	}
	pm := map[key]bool{{2, "x"}: true, {1, "z"}: true, {1, "y"}: true}
	var keys []key
	for k, _, it := MapAny(pm).Start(); it.Next(&k, nil); {
		keys = append(keys, k)
	}
	if !slices.Equal(keys, []key{{1, "y"}, {1, "z"}, {2, "x"}}) {
		t.Errorf("order %v", keys)
	}
	fm := map[float64]int{math.NaN(): 7, 1: 1}
	n := 0
	for _, v, it := MapOrdered(fm).Start(); it.Next(nil, &v); {
		n += v
	}
	if n != 8 {
		t.Errorf("sum %d, want 8 (the NaN entry once)", n)
	}
}
