package rt

import (
	"os"
	"runtime"
	"testing"

	"github.com/execspec/execspec/instrument/rt/rtproc"
	"github.com/execspec/execspec/properties/control/sched"
)

// procsTest starts a test of the P count from two Ps, and puts the
// count back when it ends.
func procsTest(t *testing.T) {
	t.Helper()
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment")
	}
	if rtproc.Held() {
		t.Fatal("the process is held on one P outside any run")
	}
	prev := runtime.GOMAXPROCS(2)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}

// A run runs on one P; instrumented code (GOMAXPROCS) sees the value
// the process had, a value it sets is what it sees from then on, and
// the process gets it when the run ends.
func TestOneProc(t *testing.T) {
	procsTest(t)
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
		t.Errorf("after the run: %d Ps, the program sees %d; want 3, 3", n, GOMAXPROCS(0))
	}
}

// A Bubble (a Session's) keeps the process on one P from its first run
// to Close, and holds nest.
func TestHoldOneProc(t *testing.T) {
	procsTest(t)
	s, err := NewBubble(t)
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	for range 2 {
		if _, err := s.Run(Config{Strategy: sched.Random(1)}, func(*testing.T) { seen = GOMAXPROCS(0) }); err != nil {
			t.Fatal(err)
		}
		if n := runtime.GOMAXPROCS(0); n != 1 || seen != 2 {
			t.Errorf("between the runs of a bubble: %d Ps, the program saw %d; want 1, 2", n, seen)
		}
	}
	release := HoldOneProc()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := runtime.GOMAXPROCS(0); n != 1 || GOMAXPROCS(0) != 2 {
		t.Errorf("held after the bubble: %d Ps, the program sees %d; want 1, 2", n, GOMAXPROCS(0))
	}
	release()
	if n := runtime.GOMAXPROCS(0); n != 2 || GOMAXPROCS(0) != 2 {
		t.Errorf("after the last hold: %d Ps, the program sees %d; want 2, 2", n, GOMAXPROCS(0))
	}
}
