package pkginit

import (
	"slices"
	"testing"
)

// TestAgain: the registered packages run again in registration order,
// each path once, every variable kept zero until restore puts the
// program's values back; a panic stops the packages after it and names
// its package, and restore still undoes what ran.
func TestAgain(t *testing.T) {
	var r Registry
	a, b := 1, "b"
	var order []string
	r.Register("x/a", func(keep func(func())) {
		keep(Keep(&a))
		order = append(order, "a")
		a = 10
	})
	r.Register("x/a", func(func(func())) { order = append(order, "a twice") })
	r.Register("x/b", func(keep func(func())) {
		keep(Keep(&b))
		order = append(order, "b:"+b)
	})
	if r.Len() != 2 {
		t.Fatalf("Len %d, want 2 (a path registered twice keeps its first)", r.Len())
	}
	restore, p := r.Again()
	if p != nil || !slices.Equal(order, []string{"a", "b:"}) || a != 10 {
		t.Fatalf("Again: %v, order %q, a %d", p, order, a)
	}
	restore()
	if a != 1 || b != "b" {
		t.Errorf("restored a %d, b %q; want 1, b", a, b)
	}

	var bad Registry
	order = nil
	bad.Register("x/a", func(keep func(func())) { keep(Keep(&a)); panic("boom") })
	bad.Register("x/b", func(func(func())) { order = append(order, "b") })
	restore, p = bad.Again()
	if p == nil || p.Path != "x/a" || p.Value != "boom" || len(p.Stack) == 0 || order != nil || a != 0 {
		t.Fatalf("a panicking package: %+v, order %q, a %d", p, order, a)
	}
	restore()
	if a != 1 {
		t.Errorf("restored a %d after a panic, want 1", a)
	}
}
