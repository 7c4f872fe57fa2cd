// Package control runs the goroutines of a program one at a time and chooses
// the interleaving: controlled interleavings for executors that pass their
// yield points through executor.Scheduler.
//
// Vocabulary:
//   - A controlled goroutine is one started by Controller.Run (goroutine 0,
//     the program's main) or by Controller.Go. Goroutines are numbered in the
//     order they were started; under control that order is deterministic.
//   - A yield point (a step) is a call of Yield or Block, named by an
//     executor.Point. Only there can another goroutine take over.
//   - A decision is a yield point where more than one goroutine can run. The
//     Strategy chooses; the Controller records the Choice.
//   - A Schedule is the record of a run: its choices, its number of steps and
//     a checksum of everything that happened. Replaying a Schedule runs the
//     same steps and must reproduce the checksum: determinism is checked,
//     not assumed.
//   - Strategies: Random (seeded), RapidChooser (each choice a rapid draw, so
//     the schedule shrinks with the workload), PCT (probabilistic concurrency
//     testing with a bug depth), Replay, and Explore for bounded exhaustive
//     search of every schedule of a tiny program. Explore with a StateKey
//     (ExploreConfig.StateKey) caches states: a decision whose state was
//     already expanded on another branch gets no alternatives, and within a
//     run of decisions that leave the state unchanged only the first
//     BlockDepth do — a heuristic reduction keyed by the model's state
//     (what `verify cover --strategy exhaustive` uses), not a sound one for
//     the program's whole state.
//
// Blocking under control: a controlled goroutine must never block on
// anything the Controller does not see (a channel, a sync.Mutex, time.Sleep).
// Locks, condition variables and parking are written with Block and a
// predicate over shared state:
//
//	// lock
//	c.Block(executor.PointLock, func() bool { return !m.held })
//	m.held = true
//	// unlock
//	m.held = false
//
// Because exactly one controlled goroutine runs at a time and every handover
// is a channel operation, such state needs no atomic operations.
//
// A run that cannot go on is stopped: a deadlock (*DeadlockError names the
// blocked goroutines and their points), a panic (*PanicError with the
// stack), the step budget (ErrBudget: unknown, not a failure). The
// goroutines are then unwound one at a time by a panic with a private value
// that the Controller recovers; executors that recover panics must re-panic
// it (IsAbort). No goroutine is leaked, except after a *StallError (a
// goroutine blocked outside the Controller).
//
// An executor under control, in a rapid property: the schedule is drawn
// from the test case, so it shrinks with the workload, and the executor's
// events go into the checksum:
//
//	rapid.Check(t, func(rt *rapid.T) {
//		c := control.New(control.RapidChooser(rt))
//		err := c.Run(func() {
//			ex := newExecutor()
//			ex.(executor.Controllable).SetScheduler(c)
//			ex.(executor.Reporter).SetRecorder(c.Recorder(nil))
//			// spawn the workload drawn from rt, ex.Wait(), ex.Close()
//		})
//		if err != nil { // or a property of the run failed
//			_ = c.Schedule().Save(control.TestdataPath(t.Name()))
//			rt.Fatal(err)
//		}
//	})
//
// and later, c.Replay(program, schedule) reruns it exactly, or says how it
// diverged.
//
// Example, a lost update found by random schedules:
//
//	c := control.New(control.Random(1))
//	for range 100 {
//		x := 0
//		err := c.Run(func() {
//			for range 2 {
//				c.Go(func() {
//					v := x
//					c.Yield(executor.PointNone)
//					x = v + 1
//				})
//			}
//		})
//		if err == nil && x != 2 {
//			_ = c.Schedule().Save("testdata/lost_update.schedule")
//			break
//		}
//	}
package control
