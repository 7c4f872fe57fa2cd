package control_test

import (
	"errors"
	"fmt"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/control"
)

// Two goroutines increment a counter with a read, a yield point and a
// write. Exhaustive exploration finds the schedule that loses an update,
// and the schedule replays exactly.
func ExampleExplore() {
	var x int
	program := func(c *control.Controller) func() {
		return func() {
			for range 2 {
				c.Go(func() {
					v := x
					c.Yield(executor.PointNone)
					x = v + 1
				})
			}
		}
	}
	res := control.Explore(control.ExploreConfig{}, func(c *control.Controller) error {
		x = 0
		if err := c.Run(program(c)); err != nil {
			return err
		}
		if x != 2 {
			return errors.New("lost update")
		}
		return nil
	})
	fmt.Println(res.Verdict, "after", res.Runs, "schedules:", res.Err)
	fmt.Println("preemptions:", res.Schedule.Preemptions())

	c := control.New(control.Random(0))
	x = 0
	err := c.Replay(program(c), res.Schedule)
	fmt.Println("replay:", err, "x =", x)
	// Output:
	// violated after 2 schedules: lost update
	// preemptions: 1
	// replay: <nil> x = 1
}

// A lock built on Block, and two goroutines that take two locks in
// opposite orders: some schedule deadlocks, and Run names the blocked
// goroutines.
func ExampleController_Block() {
	type lock struct{ held bool }
	var a, b lock
	acquire := func(c *control.Controller, l *lock) {
		c.Block(executor.PointLock, func() bool { return !l.held })
		l.held = true
	}
	res := control.Explore(control.ExploreConfig{}, func(c *control.Controller) error {
		a, b = lock{}, lock{}
		return c.Run(func() {
			c.Go(func() { acquire(c, &a); acquire(c, &b); a.held, b.held = false, false })
			c.Go(func() { acquire(c, &b); acquire(c, &a); a.held, b.held = false, false })
		})
	})
	fmt.Println(res.Err)
	// Output:
	// control: deadlock after 4 steps: no goroutine can run; goroutine 1 blocked at lock, goroutine 2 blocked at lock
}
