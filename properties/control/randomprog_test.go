package control

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/executor"
)

// op is one instruction of a generated program.
type op struct {
	kind int // 0 yield, 1 lock, 2 unlock (if held), 3 go (start a child), 4 note, 5 wait until counter ≥ arg
	arg  int
}

// genProgram draws a program: per goroutine, a list of ops over a few
// shared locks and one counter.
func genProgram(t *rapid.T) [][]op {
	g := rapid.IntRange(1, 4).Draw(t, "goroutines")
	prog := make([][]op, g)
	for i := range prog {
		n := rapid.IntRange(0, 8).Draw(t, "ops")
		for range n {
			prog[i] = append(prog[i], op{rapid.IntRange(0, 5).Draw(t, "kind"), rapid.IntRange(0, 2).Draw(t, "arg")})
		}
	}
	return prog
}

// interpret runs prog under c and logs every operation as it happens.
func interpret(c *Controller, prog [][]op, log *[]string) func() {
	var locks [3]bool
	counter := 0
	var body func(id int, ops []op)
	body = func(id int, ops []op) {
		held := map[int]bool{}
		for i, o := range ops {
			*log = append(*log, fmt.Sprintf("g%d:%d", id, i))
			switch o.kind {
			case 0:
				c.Yield(executor.PointNone)
			case 1:
				if !held[o.arg] {
					c.Block(executor.PointLock, func() bool { return !locks[o.arg] })
					locks[o.arg] = true
					held[o.arg] = true
				}
			case 2:
				if held[o.arg] {
					locks[o.arg] = false
					delete(held, o.arg)
				}
			case 3:
				child := 100*id + i
				c.Go(func() { body(child, []op{{0, 0}, {4, 1}}) })
			case 4:
				counter++
				c.Note(uint64(counter))
			case 5:
				c.Block(executor.PointPark, func() bool { return counter >= o.arg })
			}
		}
		for l := range held {
			locks[l] = false
		}
	}
	return func() {
		for i := range prog {
			c.Go(func() { body(i+1, prog[i]) })
		}
	}
}

// Generated programs: every run ends (or deadlocks) and its schedule
// replays to the same operations in the same order, the same checksum
// and the same outcome.
func TestRandomProgramsReplay(t *testing.T) {
	noLeak(t)
	rapid.Check(t, func(rt *rapid.T) {
		prog := genProgram(rt)
		seed := rapid.Uint64().Draw(rt, "seed")
		c := NewWith(Random(seed), Config{MaxSteps: 10_000})
		var log1 []string
		err1 := c.Run(interpret(c, prog, &log1))
		var d *DeadlockError
		if err1 != nil && !errors.As(err1, &d) {
			rt.Fatalf("run: %v", err1)
		}
		s := c.Schedule()
		var log2 []string
		err2 := c.Replay(interpret(c, prog, &log2), s)
		if errors.Is(err2, ErrDiverged) {
			rt.Fatalf("replay diverged: %v", err2)
		}
		if fmt.Sprint(err1) != fmt.Sprint(err2) {
			rt.Fatalf("run: %v; replay: %v", err1, err2)
		}
		if !slices.Equal(log1, log2) {
			rt.Fatalf("replay did other operations:\n%v\n%v", log1, log2)
		}
	})
}

// Generated tiny programs: Explore never runs the same schedule twice
// (every run has its own checksum: two schedules differ first at a
// decision, where different goroutines take the next step), it sees at
// least as many runs as distinct operation orders, and its runs replay.
func TestRandomProgramsExplore(t *testing.T) {
	noLeak(t)
	rapid.Check(t, func(rt *rapid.T) {
		prog := genProgram(rt)
		if len(prog) > 3 {
			prog = prog[:3]
		}
		for i := range prog {
			if len(prog[i]) > 4 {
				prog[i] = prog[i][:4]
			}
		}
		orders := map[string]bool{}
		sums := map[uint64]bool{}
		var schedules []Schedule
		res := Explore(ExploreConfig{MaxRuns: 500}, func(c *Controller) error {
			var log []string
			err := c.Run(interpret(c, prog, &log))
			orders[fmt.Sprint(log)] = true
			sums[c.Schedule().Checksum] = true
			var d *DeadlockError
			if err != nil && !errors.As(err, &d) {
				return err
			}
			if len(schedules) < 20 {
				schedules = append(schedules, c.Schedule())
			}
			return nil
		})
		if res.Verdict.String() == "violated" {
			rt.Fatalf("explore: %v", res.Err)
		}
		if res.Runs < len(orders) {
			rt.Fatalf("%d runs but %d distinct orders", res.Runs, len(orders))
		}
		if len(sums) != res.Runs {
			rt.Fatalf("%d runs but %d distinct checksums: a schedule ran twice", res.Runs, len(sums))
		}
		c := New(Random(0))
		for _, s := range schedules {
			var log []string
			if err := c.Replay(interpret(c, prog, &log), s); errors.Is(err, ErrDiverged) {
				rt.Fatalf("replay: %v", err)
			}
		}
	})
}
