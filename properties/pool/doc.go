// Package pool checks goroutine pools that run func() tasks — the shape of
// ants, pond, workerpool, conc and errgroup — for the properties of the
// executor model that apply to them:
//
//   - exactly once: no task runs twice;
//   - none lost: every task whose Submit succeeded runs;
//   - refused means not run: a task whose Submit failed never runs;
//   - open means accepting: before Close, Submit does not refuse (unless
//     Config.MayRefuse says the pool may, as non-blocking pools do when
//     full);
//   - capacity: no more tasks run at once than the pool's stated capacity;
//   - shutdown: Close returns only after every accepted task has finished,
//     or reports (with an error) that some did not;
//   - no panic: the pool's own operations (Submit, Close) do not panic;
//   - no hang: Submit and Close return within a time limit; otherwise the
//     report names the tasks that never ran and where the test was stuck.
//
// Vocabulary: a Pool is the two-method interface the checks drive (adapt a
// library with Func or FromGroup); a Workload is one generated test case:
// how many tasks, from how many goroutines submitting at once, with how
// much work in each; a Finding is one property that failed.
//
// Example, in a test of a pool library:
//
//	func TestPool(t *testing.T) {
//		pool.Check(t, func() pool.Pool {
//			p, _ := ants.NewPool(4)
//			return pool.Func(p.Submit, func() error { return p.ReleaseTimeout(5 * time.Second) })
//		}, pool.Config{Capacity: 4})
//	}
//
// Check draws workloads with rapid (so a failure shrinks to a small
// workload); Run does the same from a seed and returns an error, for use
// outside tests. Each case runs on a fresh pool.
package pool
