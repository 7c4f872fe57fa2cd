package control

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// The Controller implements the executor hook.
var _ executor.Scheduler = (*Controller)(nil)

// mustRun runs prog under c and fails t if the run fails.
func mustRun(t *testing.T, c *Controller, prog func()) {
	t.Helper()
	if err := c.Run(prog); err != nil {
		t.Fatal(err)
	}
}

// noLeak fails t if goroutines started during the test are still alive.
func noLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("%d goroutines leaked:\n%s", n-before, buf)
		}
	})
}

func TestRunMainOnly(t *testing.T) {
	noLeak(t)
	c := New(Random(1))
	ran := false
	mustRun(t, c, func() { ran = true })
	if !ran {
		t.Fatal("main did not run")
	}
	if c.Steps() != 0 || len(c.Schedule().Choices) != 0 {
		t.Fatalf("a program without yield points took %d steps, %d choices", c.Steps(), len(c.Schedule().Choices))
	}
}

func TestOneAtATime(t *testing.T) {
	noLeak(t)
	c := New(Random(7))
	for range 20 {
		running := 0 // plain int: the race detector checks the handovers
		maxRunning := 0
		err := c.Run(func() {
			for range 4 {
				c.Go(func() {
					for range 10 {
						running++
						maxRunning = max(maxRunning, running)
						running--
						c.Yield(executor.PointNone)
					}
				})
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if maxRunning != 1 {
			t.Fatalf("%d goroutines ran at once", maxRunning)
		}
	}
}

func TestRunWaitsForAll(t *testing.T) {
	noLeak(t)
	c := New(Random(3))
	for range 50 {
		prog, ran := poolProgram(c, 3, 5, false)
		mustRun(t, c, prog)
		if *ran != 5 {
			t.Fatalf("%d of 5 tasks ran", *ran)
		}
	}
}

func TestDeterminism(t *testing.T) {
	noLeak(t)
	// The same seed gives the same schedule on a fresh Controller.
	record := func() []Schedule {
		c := New(Random(42))
		var out []Schedule
		for range 20 {
			prog, _ := poolProgram(c, 3, 6, false)
			mustRun(t, c, prog)
			out = append(out, c.Schedule())
		}
		return out
	}
	a, b := record(), record()
	distinct := map[uint64]bool{}
	for i := range a {
		if a[i].Checksum != b[i].Checksum || a[i].Steps != b[i].Steps || len(a[i].Choices) != len(b[i].Choices) {
			t.Fatalf("run %d: same seed, different runs: %d steps %016x vs %d steps %016x", i, a[i].Steps, a[i].Checksum, b[i].Steps, b[i].Checksum)
		}
		distinct[a[i].Checksum] = true
	}
	if len(distinct) < 10 {
		t.Fatalf("20 random runs gave only %d distinct checksums", len(distinct))
	}
	// Each schedule replays exactly, several times.
	c := New(Random(0))
	for i, s := range a {
		for range 3 {
			prog, ran := poolProgram(c, 3, 6, false)
			if err := c.Replay(prog, s); err != nil {
				t.Fatalf("replay %d: %v", i, err)
			}
			if *ran != 6 {
				t.Fatalf("replay %d: %d tasks ran", i, *ran)
			}
			if got := c.Schedule(); got.Checksum != s.Checksum {
				t.Fatalf("replay %d: checksum %016x, want %016x", i, got.Checksum, s.Checksum)
			}
		}
	}
}

func TestReplayDetectsDivergence(t *testing.T) {
	noLeak(t)
	orig := Random(5)
	c := New(orig)
	prog, _ := poolProgram(c, 2, 4, false)
	mustRun(t, c, prog)
	s := c.Schedule()
	if len(s.Choices) == 0 {
		t.Fatal("no decisions")
	}

	// A different checksum.
	bad := s
	bad.Checksum ^= 1
	prog, _ = poolProgram(c, 2, 4, false)
	if err := c.Replay(prog, bad); !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("tampered checksum: got %v", err)
	}

	// A program that notes different values: same steps, other checksum.
	prog = func() {
		p := newMiniPool(c, 2, false)
		for i := range 4 {
			p.Submit(func() { c.Note(uint64(i + 100)) })
		}
		p.Close()
	}
	if err := c.Replay(prog, s); !errors.Is(err, ErrDiverged) {
		t.Fatalf("different notes: got %v", err)
	}

	// A program with more work: runs out of choices or differs in counts.
	prog, _ = poolProgram(c, 2, 8, false)
	if err := c.Replay(prog, s); !errors.Is(err, ErrDiverged) {
		t.Fatalf("longer program: got %v", err)
	}

	// A program with less work: does not use every choice.
	prog, _ = poolProgram(c, 2, 1, false)
	if err := c.Replay(prog, s); !errors.Is(err, ErrDiverged) {
		t.Fatalf("shorter program: got %v", err)
	}

	// The original still replays, and the Strategy was restored.
	prog, _ = poolProgram(c, 2, 4, false)
	if err := c.Replay(prog, s); err != nil {
		t.Fatal(err)
	}
	if c.Strategy() != orig {
		t.Fatalf("strategy not restored: %T", c.Strategy())
	}
}

func TestDeadlock(t *testing.T) {
	noLeak(t)
	c := New(Random(1))
	unwound := 0
	err := c.Run(func() {
		never := func() bool { return false }
		for range 2 {
			c.Go(func() {
				defer func() { unwound++ }()
				c.Block(executor.PointPark, never)
				t.Error("Block returned")
			})
		}
		c.Yield(executor.PointSpawn)
		c.Block(executor.PointLock, never)
	})
	var d *DeadlockError
	if !errors.As(err, &d) {
		t.Fatalf("got %v, want a deadlock", err)
	}
	want := []BlockedGoroutine{{0, executor.PointLock}, {1, executor.PointPark}, {2, executor.PointPark}}
	if len(d.Blocked) != len(want) {
		t.Fatalf("blocked %v, want %v", d.Blocked, want)
	}
	for i := range want {
		if d.Blocked[i] != want[i] {
			t.Fatalf("blocked %v, want %v", d.Blocked, want)
		}
	}
	msg := err.Error()
	for _, s := range []string{"goroutine 0 blocked at lock", "goroutine 2 blocked at park"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q lacks %q", msg, s)
		}
	}
	if unwound != 2 {
		t.Fatalf("%d of 2 blocked goroutines ran their deferred calls", unwound)
	}
	// The Controller is usable after a deadlock.
	mustRun(t, c, func() {})
}

func TestDeadlockLockOrder(t *testing.T) {
	noLeak(t)
	// Two goroutines take two locks in opposite orders: some schedules
	// deadlock, and the error names both goroutines at PointLock.
	c := New(Random(11))
	found := false
	for range 200 {
		a, b := &mutex{s: c}, &mutex{s: c}
		err := c.Run(func() {
			c.Go(func() { a.Lock(); c.Yield(executor.PointNone); b.Lock(); b.Unlock(); a.Unlock() })
			c.Go(func() { b.Lock(); c.Yield(executor.PointNone); a.Lock(); a.Unlock(); b.Unlock() })
		})
		var d *DeadlockError
		if errors.As(err, &d) {
			if len(d.Blocked) != 2 || d.Blocked[0] != (BlockedGoroutine{1, executor.PointLock}) || d.Blocked[1] != (BlockedGoroutine{2, executor.PointLock}) {
				t.Fatalf("deadlock %v", d.Blocked)
			}
			found = true
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if !found {
		t.Fatal("no deadlock in 200 random runs")
	}
}

func TestPanicInGoroutine(t *testing.T) {
	noLeak(t)
	c := New(Random(2))
	others := 0
	err := c.Run(func() {
		c.Go(func() {
			defer func() { others++ }()
			for {
				c.Yield(executor.PointPoll)
			}
		})
		c.Go(func() {
			c.Yield(executor.PointPoll)
			panicHere()
		})
		c.Block(executor.PointPark, func() bool { return false })
	})
	var p *PanicError
	if !errors.As(err, &p) {
		t.Fatalf("got %v, want a panic", err)
	}
	if p.G != 2 || p.Value != "boom" || !strings.Contains(string(p.Stack), "panicHere") {
		t.Fatalf("panic %+v, stack:\n%s", p, p.Stack)
	}
	if others != 1 {
		t.Fatal("the other goroutine was not unwound")
	}
}

func panicHere() { panic("boom") }

func TestBudget(t *testing.T) {
	noLeak(t)
	c := NewWith(Random(1), Config{MaxSteps: 500})
	err := c.Run(func() {
		c.Go(func() {
			for {
				c.Yield(executor.PointPoll)
			}
		})
		for {
			c.Yield(executor.PointPark)
		}
	})
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("got %v, want the budget", err)
	}
}

// An executor that recovers the panics of the futures it polls, the abort
// signal included, still unwinds: its next yield point outside the recover
// panics again.
func TestAbortThroughRecover(t *testing.T) {
	noLeak(t)
	c := New(Random(1))
	recovered, unwound := 0, false
	err := c.Run(func() {
		c.Go(func() {
			defer func() { unwound = true }()
			for i := 0; i < 10; i++ {
				func() { // the poll, with the executor's recover
					defer func() {
						if r := recover(); r != nil {
							if !IsAbort(r) {
								t.Errorf("recovered %v", r)
							}
							recovered++
						}
					}()
					c.Block(executor.PointPoll, func() bool { return false })
				}()
				c.Yield(executor.PointPop) // the worker loop
			}
			t.Error("yield points kept returning after the abort")
		})
		c.Block(executor.PointPark, func() bool { return false })
	})
	var d *DeadlockError
	if !errors.As(err, &d) || recovered != 1 || !unwound {
		t.Fatalf("got %v after %d recovers, unwound %v", err, recovered, unwound)
	}
}

type panicky struct{ after int }

func (p *panicky) Choose(d Decision) int {
	if d.N >= p.after {
		panic("strategy out of data")
	}
	return 0
}

func TestStrategyPanicReachesCaller(t *testing.T) {
	noLeak(t)
	c := New(&panicky{after: 3})
	prog, _ := poolProgram(c, 2, 3, false)
	defer func() {
		if r := recover(); r != "strategy out of data" {
			t.Fatalf("recovered %v", r)
		}
		// Usable afterwards.
		c.SetStrategy(Random(1))
		prog, _ := poolProgram(c, 2, 3, false)
		mustRun(t, c, prog)
	}()
	_ = c.Run(prog)
	t.Fatal("Run returned")
}

type outOfRange struct{}

func (outOfRange) Choose(d Decision) int { return len(d.Runnable) }

func TestBadChoice(t *testing.T) {
	noLeak(t)
	c := New(outOfRange{})
	prog, _ := poolProgram(c, 2, 3, false)
	if err := c.Run(prog); !errors.Is(err, ErrStrategy) {
		t.Fatalf("got %v", err)
	}
}

func TestStall(t *testing.T) {
	c := NewWith(Random(1), Config{Stall: 50 * time.Millisecond})
	release := make(chan struct{})
	defer close(release)
	err := c.Run(func() {
		c.Yield(executor.PointWake)
		<-release // blocked outside the Controller
	})
	var s *StallError
	if !errors.As(err, &s) || s.Point != executor.PointWake || s.Steps != 1 {
		t.Fatalf("got %v", err)
	}
	if err := c.Run(func() {}); err == nil {
		t.Fatal("a stalled Controller ran again")
	}
}

func TestOutsideRun(t *testing.T) {
	c := New(Random(1))
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "outside") {
			t.Fatalf("recovered %v", r)
		}
	}()
	c.Yield(executor.PointNone)
}

func TestBusy(t *testing.T) {
	noLeak(t)
	c := New(Random(1))
	var inner error
	mustRun(t, c, func() { inner = c.Run(func() {}) })
	if !errors.Is(inner, ErrBusy) {
		t.Fatalf("nested Run: %v", inner)
	}
}

func TestRandomFindsLostUpdate(t *testing.T) {
	noLeak(t)
	c := New(Random(9))
	for i := range 1000 {
		x := 0
		mustRun(t, c, lostUpdate(c, &x, false))
		if x != 2 {
			t.Logf("lost update found in run %d", i+1)
			s := c.Schedule()
			path := filepath.Join(t.TempDir(), "lost_update.schedule")
			if err := s.Save(path); err != nil {
				t.Fatal(err)
			}
			loaded, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			x = 0
			if err := c.Replay(lostUpdate(c, &x, false), loaded); err != nil {
				t.Fatal(err)
			}
			if x != 1 {
				t.Fatalf("replay ended with x = %d, want the lost update", x)
			}
			return
		}
	}
	t.Fatal("no lost update in 1000 random runs")
}

func TestRandomFindsCheckThenAct(t *testing.T) {
	noLeak(t)
	c := New(Random(4))
	for range 1000 {
		sets := 0
		mustRun(t, c, checkThenAct(c, &sets))
		if sets > 1 {
			return
		}
	}
	t.Fatal("check-then-act race not found in 1000 random runs")
}

func TestLockedUpdateHolds(t *testing.T) {
	noLeak(t)
	c := New(Random(9))
	for range 500 {
		x := 0
		mustRun(t, c, lostUpdate(c, &x, true))
		if x != 2 {
			t.Fatalf("x = %d under a lock", x)
		}
	}
}

func TestRecorderNotesEvents(t *testing.T) {
	noLeak(t)
	c := New(Random(1))
	prog := func(task int64) func() {
		return func() {
			rec := c.Recorder(nil)
			for range 2 {
				c.Go(func() {
					c.Yield(executor.PointPoll)
					rec.Record(traces.Event{Kind: traces.KindPollBegin, Task: task})
				})
			}
		}
	}
	mustRun(t, c, prog(1))
	s := c.Schedule()
	if err := c.Replay(prog(1), s); err != nil {
		t.Fatal(err)
	}
	if err := c.Replay(prog(2), s); !errors.Is(err, ErrDiverged) {
		t.Fatalf("other events, same steps: %v", err)
	}
}

// TestDeadlockErrorNamesWaits: a goroutine blocked with no yield point of
// its own reads as waiting, not "blocked at none".
func TestDeadlockErrorNamesWaits(t *testing.T) {
	d := &DeadlockError{Steps: 7, Blocked: []BlockedGoroutine{{0, executor.PointNone}, {1, executor.PointPark}}}
	want := "control: deadlock after 7 steps: no goroutine can run; goroutine 0 waiting (not at a yield point), goroutine 1 blocked at park"
	if got := d.Error(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
