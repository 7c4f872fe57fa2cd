package rtstd

import (
	"cmp"
	"reflect"
	"slices"
)

// MapIt iterates over a map in the order of its keys, so that a controlled
// run that ranges over a map takes the same path in every replay (Go
// randomizes the order of each range over a map). It follows the rules of
// a range over a map: an entry deleted before it is reached is not
// produced, and the value produced is the entry's value when it is
// reached; entries added during the iteration are not produced (Go may or
// may not produce them).
type MapIt[K comparable, V any] struct {
	m  map[K]V
	es []mapEntry[K, V] // sorted by key; the values are those when the iteration began (for keys not equal to themselves: NaN)
	i  int
	k  K
	v  V
}

type mapEntry[K comparable, V any] struct {
	k K
	v V
}

// MapOrdered returns an iterator over m in the order of its keys.
func MapOrdered[M ~map[K]V, K cmp.Ordered, V any](m M) *MapIt[K, V] {
	it := snapshot(m)
	slices.SortFunc(it.es, func(a, b mapEntry[K, V]) int { return cmp.Compare(a.k, b.k) })
	return it
}

// MapAny returns an iterator over m in the order of its keys, for keys
// that are arrays or structs of ordered values (compared field by field,
// element by element).
func MapAny[M ~map[K]V, K comparable, V any](m M) *MapIt[K, V] {
	it := snapshot(m)
	slices.SortFunc(it.es, func(a, b mapEntry[K, V]) int {
		return compareValues(reflect.ValueOf(a.k), reflect.ValueOf(b.k))
	})
	return it
}

func snapshot[M ~map[K]V, K comparable, V any](m M) *MapIt[K, V] {
	it := &MapIt[K, V]{m: m, es: make([]mapEntry[K, V], 0, len(m)), i: -1}
	for k, v := range m {
		it.es = append(it.es, mapEntry[K, V]{k, v})
	}
	return it
}

// Start returns zero values of the key and value types with it, to
// declare a loop's variables: for k, v, it := rtstd.MapOrdered(m).Start(); it.Next(&k, &v); {...}
func (it *MapIt[K, V]) Start() (K, V, *MapIt[K, V]) {
	var k K
	var v V
	return k, v, it
}

// Next moves to the next entry still in the map, stores its key and value
// in *k and *v (each if not nil) and reports whether there is one.
func (it *MapIt[K, V]) Next(k *K, v *V) bool {
	for it.i++; it.i < len(it.es); it.i++ {
		e := it.es[it.i]
		if e.k != e.k { // NaN: never found again; produced once, with its value
			it.k, it.v = e.k, e.v
		} else if cur, ok := it.m[e.k]; ok {
			it.k, it.v = e.k, cur
		} else {
			continue // deleted before it was reached
		}
		if k != nil {
			*k = it.k
		}
		if v != nil {
			*v = it.v
		}
		return true
	}
	return false
}

// Key returns the current entry's key.
func (it *MapIt[K, V]) Key() K { return it.k }

// Value returns the current entry's value.
func (it *MapIt[K, V]) Value() V { return it.v }

// compareValues orders two values of the same type made of ordered kinds.
func compareValues(a, b reflect.Value) int {
	switch a.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmp.Compare(a.Int(), b.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return cmp.Compare(a.Uint(), b.Uint())
	case reflect.Float32, reflect.Float64:
		return cmp.Compare(a.Float(), b.Float())
	case reflect.Complex64, reflect.Complex128:
		if c := cmp.Compare(real(a.Complex()), real(b.Complex())); c != 0 {
			return c
		}
		return cmp.Compare(imag(a.Complex()), imag(b.Complex()))
	case reflect.String:
		return cmp.Compare(a.String(), b.String())
	case reflect.Bool:
		switch {
		case a.Bool() == b.Bool():
			return 0
		case b.Bool():
			return -1
		}
		return 1
	case reflect.Array:
		for i := range a.Len() {
			if c := compareValues(a.Index(i), b.Index(i)); c != 0 {
				return c
			}
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if c := compareValues(a.Field(i), b.Field(i)); c != 0 {
				return c
			}
		}
	}
	return 0
}
