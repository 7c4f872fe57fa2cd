// Package stress holds black-box stress helpers for executors that do not
// pass their yield points through the controlled-interleaving hook: run
// goroutines on OS threads pinned to distinct CPUs, start them together at a
// spin barrier, inject yields, and repeat a check many times.
//
// Vocabulary:
//   - Pinning: a goroutine locked to its OS thread (runtime.LockOSThread)
//     whose thread may run only on one CPU (sched_setaffinity). An owner and
//     its thieves pinned to distinct CPUs really run at the same time, which
//     is what makes a race window of a few instructions show up. Where
//     affinity is not permitted (non-Linux systems, restricted containers,
//     a CPU outside the process's set) the function still runs, unpinned,
//     and the Pinning says why.
//   - Barrier: a reusable spin barrier for a fixed number of parties, with a
//     time limit after which it gives up rather than spin forever.
//   - Yielder: runtime.Gosched with a given probability, to shake the Go
//     scheduler's interleavings at chosen points.
//
// Example: an owner and a thief on two CPUs, started together.
//
//	cpus, _ := stress.CPUs()
//	err := stress.Repeat(1000, func(i int) error {
//		pins, ok := stress.Together(cpus, time.Second, owner, thief)
//		if !ok {
//			return errors.New("the parties did not meet at the barrier")
//		}
//		_ = pins // pins[i].Pinned, pins[i].Reason
//		return check()
//	})
package stress
