package rt

import (
	"runtime"
	"testing"

	"github.com/execspec/execspec/properties/control/sched"
)

// TestPlainOpsReused: a goroutine's plain sends and receives use their
// operation again (reuse, keep): goroutines that send and receive on two
// channels of two types allocate nothing per value, where they allocated
// one operation per send and per receive, and a send no longer boxes its
// value (an int over 255, a string).
func TestPlainOpsReused(t *testing.T) {
	mallocs := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Run(t, Config{Strategy: sched.Random(1)}, func(*testing.T) {
			ints, strs := make(chan int, n), make(chan string, n)
			Go(func() {
				for i := range n {
					Send(ints, i)
					Send(strs, "x")
				}
				Close(ints)
			})
			for {
				if _, ok := Recv2(ints); !ok {
					return
				}
				Recv(strs)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	const n = 2000
	mallocs(10) // the first run sets up what every run uses
	if per := float64(mallocs(10+n)-mallocs(10)) / n; per > 0.5 {
		t.Fatalf("%.2f allocations per pair of values sent and received (4 without reuse)", per)
	}
}

// TestReuseKeepsTwo: reuse takes the kept operation of the type asked
// for, keep holds the two latest, and a shadow kept with one serves
// only the same run.
func TestReuseKeepsTwo(t *testing.T) {
	g := &gor{}
	a := reuse[recvOp[int]](g)
	keep(g, a)
	b := reuse[sendOp[int]](g)
	keep(g, b)
	if reuse[recvOp[int]](g) != a || reuse[sendOp[int]](g) != b {
		t.Fatal("the two latest were not used again")
	}
	keep(g, a)
	keep(g, b)
	keep(g, new(recvOp[string]))
	if reuse[recvOp[int]](g) == a || reuse[sendOp[int]](g) != b {
		t.Fatal("keep did not drop the oldest of three")
	}
}
