package control

import (
	"fmt"
	"slices"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// noteRecorder counts events and collects them; the Controller's Recorder
// mixes them into the run's checksum, so that a replay proves the executor
// did the same things, not only that its goroutines took the same steps.
type noteRecorder struct {
	c      *Controller
	events int
	log    []traces.Event
}

func (r *noteRecorder) Record(e traces.Event) {
	r.events++
	r.log = append(r.log, e)
}

// builtinProgram runs a small workload on a fresh built-in executor under
// c: tasks that are pending a few times and woken by other tasks, and a
// task that spawns one. It reports how many tasks completed.
func builtinProgram(t testing.TB, c *Controller, name string, rec *noteRecorder) (func(), *int) {
	newEx, ok := executor.Builtin(name)
	if !ok {
		t.Fatalf("no built-in executor %q", name)
	}
	completed := new(int)
	return func() {
		ex := newEx()
		ex.(executor.Controllable).SetScheduler(c)
		if r, ok := ex.(executor.Reporter); ok && rec != nil {
			r.SetRecorder(c.Recorder(rec))
		}
		// A ping-pong: each of two tasks wakes the other, three rounds.
		var wakers [2]executor.Waker
		var turns [2]int
		for i := range 2 {
			_, err := ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
				wakers[i] = cx.Waker()
				turns[i]++
				if o := wakers[1-i]; o.Raw() != nil {
					o.Wake()
				}
				if turns[i] > 3 {
					*completed++
					return nil, true
				}
				return nil, false
			}))
			if err != nil {
				panic(err)
			}
		}
		// A task that wakes itself twice and spawns a child.
		n := 0
		_, err := ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
			n++
			if n == 1 {
				if _, err := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) {
					*completed++
					return nil, true
				})); err != nil {
					panic(err)
				}
			}
			if n < 3 {
				cx.Waker().Wake()
				return nil, false
			}
			*completed++
			return nil, true
		}))
		if err != nil {
			panic(err)
		}
		// Wait, then Close: a Spawn from a task after Close has begun is
		// refused (ErrClosed), as it should be.
		if err := ex.Wait(); err != nil {
			panic(err)
		}
		if err := ex.Close(); err != nil {
			panic(err)
		}
	}, completed
}

func TestBuiltinUnderControl(t *testing.T) {
	noLeak(t)
	for _, name := range executor.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			c := New(Random(1))
			var schedules []Schedule
			var logs [][]traces.Event
			for range 20 {
				rec := &noteRecorder{c: c}
				prog, completed := builtinProgram(t, c, name, rec)
				mustRun(t, c, prog)
				if *completed != 4 {
					t.Fatalf("%d of 4 tasks completed", *completed)
				}
				if rec.events == 0 {
					t.Fatal("no events recorded")
				}
				schedules = append(schedules, c.Schedule())
				logs = append(logs, rec.log)
			}
			distinct := map[uint64]bool{}
			for i, s := range schedules {
				distinct[s.Checksum] = true
				for range 2 {
					rec := &noteRecorder{c: c}
					prog, completed := builtinProgram(t, c, name, rec)
					if err := c.Replay(prog, s); err != nil {
						t.Fatalf("schedule %d (%d steps, %d choices): %v", i, s.Steps, len(s.Choices), err)
					}
					if *completed != 4 {
						t.Fatalf("replay: %d of 4 tasks completed", *completed)
					}
					if !slices.Equal(rec.log, logs[i]) {
						t.Fatalf("schedule %d: the replay recorded other events", i)
					}
				}
			}
			if name != "fifo" && len(distinct) < 5 {
				t.Errorf("20 random runs gave %d distinct checksums", len(distinct))
			}
			t.Logf("%d distinct schedules of 20; the first has %d steps and %d choices", len(distinct), schedules[0].Steps, len(schedules[0].Choices))
		})
	}
}

func TestBuiltinWithPCT(t *testing.T) {
	noLeak(t)
	c := New(NewPCT(2, 0, 5))
	for range 20 {
		prog, completed := builtinProgram(t, c, "worksteal", nil)
		mustRun(t, c, prog)
		if *completed != 4 {
			t.Fatalf("%d of 4 tasks completed", *completed)
		}
	}
}

func TestBuiltinExplored(t *testing.T) {
	noLeak(t)
	for _, name := range executor.BuiltinNames() {
		res := Explore(ExploreConfig{MaxRuns: 1000, MaxPreemptions: 1}, func(c *Controller) error {
			prog, completed := builtinProgram(t, c, name, nil)
			if err := c.Run(prog); err != nil {
				return err
			}
			if *completed != 4 {
				return fmt.Errorf("%d of 4 tasks completed", *completed)
			}
			return nil
		})
		if res.Verdict == checker.Violated {
			t.Errorf("%s: after %d runs: %v", name, res.Runs, res.Err)
			continue
		}
		t.Logf("%s, at most one preemption: %v after %d runs", name, res.Verdict, res.Runs)
	}
}
