package traces

import "testing"

// TestNameIndex: in every table, each name is found at its index, and no
// near miss (a name with a byte changed, cut short or lengthened) is
// found unless it is itself a name of the table.
func TestNameIndex(t *testing.T) {
	for _, tab := range []struct {
		x     *nameIndex
		names []string
	}{
		{&kindIndex, kindNames[:]}, {&sourceIndex, sourceNames[:]}, {&resultIndex, resultNames[:]},
		{&outcomeIndex, outcomeNames[:]}, {&fieldIndex, fieldNames[:]},
	} {
		is := map[string]int{}
		for i, n := range tab.names {
			if n != "" {
				is[n] = i
			}
		}
		find := func(s string) int {
			if i, ok := tab.x.find([]byte(s)); ok {
				return int(i)
			}
			return -1
		}
		want := func(s string) int {
			if i, ok := is[s]; ok {
				return i
			}
			return -1
		}
		for i, n := range tab.names {
			if got := find(n); n != "" && got != i {
				t.Errorf("%q found at %d, want %d", n, got, i)
			}
			misses := []string{"", n + "s", n[:max(len(n)-1, 0)], "x" + n}
			for j := range len(n) {
				for _, c := range []byte{'a', 'e', 'o', 's', '-', 0, 0xff} {
					b := []byte(n)
					b[j] = c
					misses = append(misses, string(b))
				}
			}
			for _, m := range misses {
				if got := find(m); got != want(m) {
					t.Errorf("%q found at %d, want %d", m, got, want(m))
				}
			}
		}
	}
	if got, ok := kindIndex.find(nil); ok {
		t.Errorf("the invalid kind's empty name found at %d", got)
	}
}

// TestNameIndexRefuses: names that no hash of length and first three
// bytes can tell apart (or shorter than three bytes) are a panic when the
// index is made, not a table that finds the wrong one.
func TestNameIndexRefuses(t *testing.T) {
	for _, names := range [][]string{{"abcd", "abcd"}, {"ab", "seq"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("newNameIndex(%q) did not panic", names)
				}
			}()
			newNameIndex(names)
		}()
	}
}
