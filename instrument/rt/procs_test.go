package rt

import (
	"runtime"
	"testing"
)

// A run runs on one P; instrumented code (GOMAXPROCS) sees the value
// the process had, and a value it sets is what it sees from then on. A
// run made on its own puts the P count back when it ends; a process that
// holds one P (a Session or TestWith made before this test) keeps it.
func TestOneProc(t *testing.T) {
	if procsFromEnv {
		t.Skip("GOMAXPROCS is set in the environment")
	}
	held := procsSeen.Load() != 0
	if !held {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	before := GOMAXPROCS(0)
	defer GOMAXPROCS(before)
	var inside, seen, seenAfterSet int
	_, err := Run(t, Config{}, func(t *testing.T) {
		inside, seen = runtime.GOMAXPROCS(0), GOMAXPROCS(0)
		GOMAXPROCS(before + 1)
		seenAfterSet = GOMAXPROCS(0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if inside != 1 || seen != before || seenAfterSet != before+1 {
		t.Errorf("in the run: %d Ps, the program saw %d and, after setting %d, %d; want 1, %d, %[3]d", inside, seen, before+1, seenAfterSet, before)
	}
	want := before + 1
	if held {
		want = 1
	}
	if n := runtime.GOMAXPROCS(0); n != want || GOMAXPROCS(0) != before+1 {
		t.Errorf("after the run: %d Ps, the program sees %d; want %d, %d", n, GOMAXPROCS(0), want, before+1)
	}
}

// holdOneProc (holdProcs) keeps the process on one P; instrumented code still sees
// the value it had.
func TestHoldOneProc(t *testing.T) {
	if procsFromEnv {
		t.Skip("GOMAXPROCS is set in the environment")
	}
	if procsSeen.Load() == 0 {
		runtime.GOMAXPROCS(2)
	}
	before := GOMAXPROCS(0)
	holdProcs()
	if runtime.GOMAXPROCS(0) != 1 || GOMAXPROCS(0) != before {
		t.Errorf("held: %d Ps, the program sees %d; want 1, %d", runtime.GOMAXPROCS(0), GOMAXPROCS(0), before)
	}
	_, err := Run(t, Config{}, func(t *testing.T) {})
	if err != nil || runtime.GOMAXPROCS(0) != 1 || GOMAXPROCS(0) != before {
		t.Errorf("after a run: %v, %d Ps, the program sees %d; want nil, 1, %d", err, runtime.GOMAXPROCS(0), GOMAXPROCS(0), before)
	}
}
