// Package pool checks goroutine pools that run func() tasks — the shape of
// ants, pond, workerpool, conc, errgroup and semaphore-guarded pools — for
// the properties of the executor model that apply to them:
//
//   - exactly-once: no task runs twice;
//   - none-lost: every accepted task runs (unless the pool was cancelled);
//   - refused-not-run: a task whose submit failed (refused, or its
//     context cancelled) never runs;
//   - submit-succeeds: an open pool that blocks when full does not refuse
//     (unless it may: Config.MayRefuse, a nonblocking or bounded-queue
//     configuration);
//   - capacity: no more tasks (or weight) run at once than the capacity in
//     effect, across Resize (Config.LazyShrink: a shrink may wait for the
//     pool's workers to retire);
//   - shutdown-waits: Close and Wait return only after every task accepted
//     before them has finished;
//   - no-panic: the pool's own operations do not panic (a task's panic
//     that the pool documents to propagate excepted); the finding carries
//     the stack;
//   - no-hang: the case makes progress at least every Config.Timeout;
//   - progress: a task the pool has room for starts within a bound
//     relative to the pool's own median start delay in the same case,
//     whether the room came from a submit, a grow, a worker's death (a
//     task's panic or Goexit, or, under control, its idle expiry) or a
//     waiter ahead giving up; the finding names which (its trigger) and
//     gives the delay as a number;
//   - errors-propagate: Close and Wait report the tasks' errors as
//     Config.Errors says, and only their own round's;
//   - reuse: after Wait the pool accepts and runs tasks again;
//   - cancel-stops: after Cancel, Close returns and no task starts later;
//   - done-refused (with Config.RefuseDone): a submit whose context is
//     already done is refused;
//   - no-crash: the pool does not end the process — a panic on a
//     goroutine of its own, a fatal error such as a negative WaitGroup
//     counter, os.Exit. Check and CheckOptions run the cases in a child
//     process (the test binary, re-run for that test alone), so a crash
//     is a finding with the stack and the function that crashed, and the
//     run goes on in a new child from the next case; the crashing case is
//     reported as drawn, with the flags that run it alone
//     (-pool.seed, -pool.from, -pool.cases).
//
// Vocabulary: a Pool is the two-method interface the checks drive
// (Submit, Close); its optional abilities are small interfaces found by
// type assertion — Resizer, ContextSubmitter, WeightedSubmitter,
// ErrorSubmitter, Waiter, Canceller — and Adapter builds any combination
// from functions. Options is one pool configuration, drawn per case from
// the ranges a Space declares (capacity, queue bound, idle timeout,
// nonblocking). A Workload is one case: the configuration and rounds of
// operations (submits of tasks that spin, sleep, hold, panic, Goexit or
// return errors; submits whose context is cancelled; Resize; Cancel) run
// by several goroutines at once, with Wait between rounds. A Finding is
// one defect: a property and the operation that triggered it (its Key),
// the pool's configuration and the shrunk case.
//
// Example, in a test of a pool library:
//
//	func TestPool(t *testing.T) {
//		pool.CheckOptions(t, func(o pool.Options) pool.Pool {
//			p, _ := ants.NewPool(o.Capacity)
//			return &pool.Adapter{SubmitFunc: p.Submit, ResizeFunc: p.Tune,
//				CloseFunc: func() error { return p.ReleaseTimeout(5 * time.Second) }}
//		}, pool.Config{Space: pool.Space{Capacity: [2]int{1, 4}}})
//	}
//
// An adapter's test declares the library once — its module, one of its
// functions (where the binary links it from names the version) and the
// defects acknowledged in a range of versions — and checks its targets;
// -pool.cases and -pool.seed size the run:
//
//	var antsLib = pool.Library{
//		Module: "github.com/panjf2000/ants/v2",
//		Func:   ants.NewPool,
//		Known:  []pool.KnownDefect{{Key: pool.CapacityBound, Fixed: "v2.11.4", Why: "ants #374"}},
//	}
//
//	func TestAnts(t *testing.T) {
//		antsLib.Check(t, pool.Target{New: newAnts, Config: antsConfig})
//	}
//
// Explore (behind Check, CheckOptions, Run and RunOptions) runs
// Config.Cases generated cases, each on a fresh pool, and does not stop
// at the first finding: each distinct defect is shrunk on its own and
// reported once, so a defect present in every version does not hide the
// one that differs; Config.Known acknowledges a defect so that it is no
// longer reported. Races do not repeat on demand, so a shrinking step is
// kept if one of Config.Retries runs shows the defect again, and the
// finding says how often its shrunk case reproduced it. A shrinking step
// drops a round, then a half, a quarter, … of a round's operations, then
// one, so that a case of hundreds of tasks comes down in a few runs per
// halving to the size its defect needs.
//
// Two modes. Run by go test, the cases run free (stress mode: real
// threads, pinned where Config.Pin asks, a hang is a Timeout without
// progress, progress is judged against a canary goroutine). Run by
// `verify test` with the library instrumented, the same adapter's test
// runs under the controlled runtime (instrument/rt), and the suite,
// seeing the EXECSPEC_* environment, takes the test's runs over
// (instrument/harness's Own) and makes each controlled run one case
// (controlled mode, control.go): one goroutine runs at a time and the
// scheduler picks which, a hang is every goroutine blocked with no timer
// pending, progress is measured in virtual time (less the time the
// schedule let pass early, while a goroutine could run: rt.EarlyTime), a
// crash on any goroutine
// is a finding with its stack, and each distinct finding is shrunk
// (workload and schedule together) and saved as a schedule file, the
// case inside it, that replays the same case and the same interleaving:
//
//	verify test ./ants --instrument 'github.com/panjf2000/ants/v2/...' --run 'TestAnts$' --runs 2000
//	verify test ./ants --instrument 'github.com/panjf2000/ants/v2/...' --run 'TestAnts$' --time 10m
//	verify test ./ants --instrument 'github.com/panjf2000/ants/v2/...' --run 'TestAnts$' --replay ~/.cache/execspec/schedules/TestAnts.progress-Resize.schedule
//
// Under control, as in stress mode, the search goes on after a finding
// and reports each cause apart; Report.Mode says which mode ran.
//
// Under internal/: isolate (the child process a crash cannot take the
// test with), modversion (which version of a module the binary links),
// shrink (the greedy candidate loop both modes shrink with) and workers
// (how the goroutines that ran tasks ended, under control).
package pool
