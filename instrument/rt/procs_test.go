package rt

import (
	"runtime"
	"testing"
)

// A run runs on one P; instrumented code (GOMAXPROCS) sees the value
// the process had, a value it sets takes effect when the run ends, and
// outside a run GOMAXPROCS is the runtime's.
func TestOneProc(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var inside, seen, seenAfterSet int
	_, err := Run(t, Config{}, func(t *testing.T) {
		inside, seen = runtime.GOMAXPROCS(0), GOMAXPROCS(0)
		GOMAXPROCS(3)
		seenAfterSet = GOMAXPROCS(0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if inside != 1 || seen != 2 || seenAfterSet != 3 {
		t.Errorf("in the run: %d Ps, the program saw %d and, after setting 3, %d; want 1, 2, 3", inside, seen, seenAfterSet)
	}
	if n := runtime.GOMAXPROCS(0); n != 3 || GOMAXPROCS(0) != 3 {
		t.Errorf("after the run: %d Ps (GOMAXPROCS %d), want 3", n, GOMAXPROCS(0))
	}
	// A process on one P stays so, and sees 1.
	runtime.GOMAXPROCS(1)
	_, err = Run(t, Config{}, func(t *testing.T) { seen = GOMAXPROCS(0) })
	if err != nil || seen != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("on one P: %v, saw %d, %d Ps after; want nil, 1, 1", err, seen, runtime.GOMAXPROCS(0))
	}
}
