// Package rt is the runtime that instrumented code calls: it runs the
// goroutines of a test one at a time inside a testing/synctest bubble and
// lets a strategy (random, PCT, replay: properties/control/sched, the
// same as properties/control's) choose, at each yield point, which one
// runs next. It is linked into the test binaries of the packages it
// controls, so it imports nothing but the standard library and
// properties/control/sched (standard library only itself).
//
// Vocabulary:
//   - A controlled goroutine is goroutine 0 (the test's body) or one
//     started by Go from a controlled goroutine. Exactly one holds control
//     at a time; the others wait on a channel of their own (durably
//     blocked, in synctest's words). Goroutines started by code that was
//     not rewritten are uncontrolled: before every decision the scheduler
//     lets them run until they block (synctest.Wait), so that what a
//     decision sees does not depend on timing.
//   - A yield point is a call of this package by the goroutine holding
//     control: Go, Send, Recv, Recv2, Select, Close, Yield (before an
//     atomic operation), SpinCAS, Gosched, GoschedLoop, Sleep, and the
//     methods of rtstd's Mutex, RWMutex, WaitGroup, Once and Cond. Called
//     by any other goroutine they do what Go does.
//   - A controlled primitive (primitive.go) is built on Holding and its
//     Holder: the caller holds control or not, the run's number that
//     stamps the primitive's state, a yield point with an operation code
//     (Op), a block until a condition holds, named for a hang's report.
//     The subpackage rtstd builds sync's types so; it also holds the
//     key-ordered map ranges of rewritten code (MapOrdered, MapAny), so
//     that a replay takes the same path.
//   - Blocking: a goroutine whose operation cannot complete waits with a
//     predicate that reads state without side effects: for a channel, the
//     runtime's own channel descriptor (length, closed, waiting senders
//     and receivers, read only while every other goroutine is settled) and
//     a shadow of the pending operations of controlled goroutines, through
//     which two controlled goroutines that meet on an unbuffered channel
//     hand the value over. When no controlled goroutine can run, those
//     blocked on channels perform their operations for real (the external
//     phase), so that timers and uncontrolled goroutines can complete
//     them; virtual time then advances. A timer whose time came counts as
//     ready even before the runtime put its value in the channel, and a
//     value the real select took while other cases became ready at the
//     same instant is put back for the schedule to choose: the runtime's
//     order among timers of one instant (random) decides nothing. When
//     only time can end the waits (no uncontrolled goroutine, no AfterFunc
//     to adopt, receives only), the phase makes no handovers: the
//     goroutine that found nobody to run (or the coordinator) waits for
//     the earliest timer and the other channels in one real select (for
//     the timer alone if no other timer of the bubble is due before it:
//     internal/rtlayout reads the runtime's channels, timers and bubble),
//     then completes what can complete at that instant in the order of
//     ids, as the goroutines' own real selects would have (external.go).
//   - Candidates (ready.go): a choice's candidates come from sets of
//     ids kept as goroutines block and go on (runnable, a select a
//     counterpart completed) and from one loop over the cases of every
//     blocked select; the package's tests check each choice against
//     asking every goroutine alive (EXECSPEC_CHECK_READY=1 does in any
//     test binary).
//   - Garbage collection: while a test is under control, a ballast (an
//     untouched allocation without pointers) raises the collector's heap
//     goal, unless GOGC is set (rtproc.LessGC).
//   - One P: a run runs on one P (GOMAXPROCS 1), so that a handover of
//     control does not wake an idle P's thread for nothing; a Session
//     keeps one P from its first run to Close, and the process gets its
//     Ps back after, unless GOMAXPROCS is set in the environment (then
//     nothing changes). Instrumented code asks GOMAXPROCS (the rewriter's
//     gomaxprocs rule) and sees the value the process had
//     (rtproc.HoldOneProc).
//   - Config.EarlyTimers: while a goroutine waits for a timer, letting
//     time pass is a candidate of one decision in four; choosing it lets
//     virtual time pass while the runnable goroutines wait (they are
//     slow), so bugs that need a timer to fire before another goroutine
//     runs are reached (Go 1.26). A pending AfterFunc timer counts too (a
//     stand-in: its goroutine does not exist before it fires). EarlyTime
//     tells how much virtual time the run let pass so while a goroutine of
//     the code under test could run (goroutines a harness marks as its own
//     with Harness do not count; timers.go): a check that measures speed
//     in virtual time leaves it out. The test's own timers are never
//     rushed (testtimers.go): the rewriter routes those that the _test.go
//     files of the packages under test create through rtstd's TestAfter,
//     TestNewTimer, TestNewTicker, TestTick, TestAfterFunc, TestSleep and
//     TestWithTimeout (and the other context functions with a timer),
//     which register them (OwnTimer, OwnFuncTimer), and time passes early only to a timer due strictly before every
//     pending test timer, so a test's timeout fires only once the code
//     under test is blocked. A failing run that let time pass early says
//     so in one line (Bubble.EarlyNote). Schedules record the rule
//     (`rt.early-timers: 2`); those of mode 1, made when every timer
//     could fire early, replay under that rule.
//   - The standard library's sync, when the build overlays it
//     (stdsync.go, rt.StdSync): its Mutex, RWMutex, WaitGroup, Once and
//     Cond called by the goroutine holding control are yield points and
//     wait in the scheduler on the value's real state, whoever's code
//     calls them; the runtime's own use of sync on that goroutine is not
//     (run.quiet). An uncontrolled goroutine of the run that must wait
//     for a Mutex or RWMutex waits on a channel of the bubble that the
//     next release closes (durably blocked, so settling returns), and a
//     hang names it (Blocked.G is Uncontrolled).
//   - A hang is decided, not timed: every controlled goroutine blocked and
//     nothing woken within Config.Horizon of virtual time is a deadlock
//     (*HangError, ErrDeadlock), or a leak (ErrLeak) once the test's body
//     has returned; each blocked goroutine is named with its operation,
//     its file:line and its stack. A controlled goroutine blocked outside
//     the scheduler (in code that was not rewritten) for the horizon is
//     reported with every stack. Housekeeping does not hide a hang: when
//     only goroutines woken by tickers (a pool's periodic purge) have run
//     for Config.Quiet of virtual time while another is blocked, the run
//     is a hang too (housekeeping.go). A harness reads how many steps
//     housekeeping has made (HousekeepingSteps) and registers a function
//     called when a goroutine ends (AtExit): the pool suite names a
//     worker that the purge stopped so.
//   - Package initialisation: each run starts with the initialisation of
//     the instrumented packages run again on goroutine 0, under control
//     (the rewriter's package-init rule registers it with the subpackage
//     pkginit; pkginit.go): every package-level variable zero, then the
//     initialisers in the specification's order, then the init
//     functions, each package once, after those it imports. A run is a
//     fresh program for them: a default pool's dispatcher started at
//     initialisation (pond v2.1.6) is one of the run's goroutines, a
//     daemon: the run ends when the body and its own goroutines are done,
//     as a program ends with main, and a hang or leak names the body's
//     goroutines. The program's values are back after each run.
//   - Settling: before a choice the scheduler lets uncontrolled
//     goroutines run until they block (synctest.Wait), unless no
//     goroutine but the run's own was created since the run began: then
//     none can be runnable but one left from before the run that the run
//     wakes by a real operation, which a run of fresh packages has
//     nothing to share with. Checked cheaply at each choice (the
//     process's goroutine count is what the last settle left, give or
//     take the run's own), and by runtime/metrics' count of goroutines
//     created when it is not (settleBeforeChoice).
//     TestFastPathKeepsReplays checks that skipping changes no run and
//     no replay.
//     A settle that cannot end (an uncontrolled goroutine in a wait
//     synctest does not count as blocked, such as Go's own sync.Mutex,
//     or one that never blocks) is stopped by a watchdog outside the
//     bubble after rtproc.SettleLimit of real time, naming the goroutines in
//     the way (settlewatch.go). The same watchdog stops a run whose
//     steps stand still that long while nothing settles: the goroutine
//     holding control loops without a yield point (`for !done {}`) or
//     waits in code that is not instrumented.
//   - Workers (gpool.go, rtproc.Worker): a controlled goroutine runs on
//     a runtime goroutine of the bubble, which goes back to the bubble's
//     free list when the function returns (not when it panics, calls
//     Goexit or is unwound) and runs a later controlled goroutine, of the
//     same run or of a later run of a Bubble, with its stack already
//     grown. The free workers end with the bubble. runtime.NumGoroutine
//     counts them, NumGoroutine does not (a leak check that counts
//     goroutines counts as outside control). TestReuseKeepsSchedules
//     checks that reuse changes no schedule and no settle skipped.
//   - Spin loops (the rewriter's goschedloop and spincas rules,
//     GoschedLoop and SpinCAS): a loop that only yields yields once, and
//     a goroutine spinning on a compare-and-swap waits until it would
//     succeed, since their other steps change nothing another goroutine
//     can see. Runs choose so since schedule format version 2; a version
//     1 schedule replays as its runs chose (sched.Schedule.Version).
//   - Fairness: after Config.Fair consecutive steps of one goroutine while
//     others could run, the next runs, so that a spin loop cannot hold a
//     search forever.
//   - A run's Schedule (properties/control/sched's format) records its choices,
//     steps and checksum; Replay reruns it and checks the checksum.
//
// Entry points: Run (one run of a body in a synctest bubble of its own),
// Replay and ReplayWith (one replay, checked), and Bubble, a bubble that
// lives across runs asked for from outside it (Run, Do, Close), in which
// a harness makes a test's runs one at a time; StopRun ends a run from
// its body (a harness's body that makes its own runs), and ModeComment,
// CheckMode and ReplayMode carry the mode of early timers in a schedule
// file. Running tests under control (strategies from the EXECSPEC_*
// environment, reports, schedule files, a body's own runs, time budgets)
// is instrument/harness's: the rewriter wraps each TestXxx in
// harness.Test.
//
//	func TestLostUpdate(t *testing.T) {
//		for seed := range uint64(100) {
//			_, err := rt.Run(t, rt.Config{Strategy: sched.Random(seed)}, func(t *testing.T) {
//				// code that uses instrumented packages
//			})
//			if err != nil {
//				t.Fatalf("seed %d: %v", seed, err)
//			}
//		}
//	}
package rt
