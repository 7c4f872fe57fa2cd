// Package checker holds the engines that check executors against the model:
// explicit-state model checking of package model, trace conformance (every
// observed event must be an enabled rule), and linearizability of recorded
// histories.
//
// Every engine returns a three-valued Verdict: Holds, Violated (with a
// counterexample), or Unknown when a budget was spent first or the run was
// interrupted. Unknown is never reported as Holds, and a limit of a checker
// (a task id beyond MaxConformTask, a history longer than
// LinOptions.MaxEvents) is Unknown with the limit named, never Violated.
//
// # Trace conformance
//
// Conformance replays a recorded trace (package traces, format v1 or v1.1)
// through the open model of its header's policy: the first event that is
// not an enabled rule is the violation; Finish reports lost wakeups, tasks
// never completed, the fairness figures, panics and errors, and for v1.1
// traces the spurious polls, no-task wakes and the tasks abandoned at the
// executor's stop. Its doc comment states how events map onto rules.
//
// # Model checking
//
// Explore visits every state reachable in one closed configuration of the
// model, breadth first, so a safety counterexample is a shortest one. It
// checks every invariant of model.Invariants in every state, that takes find
// their task QUEUED, and that a state with nothing enabled has every task
// DONE. Liveness properties (EventuallyDone, WokenPolled, Fairness) are
// checked on the explored graph under weak fairness of each process: the
// spawner, each worker and each task's event source. Their counterexamples
// are lassos: a path, then a cycle that a fair run repeats forever.
// ExploreAll checks several properties on one exploration: the graph is
// built once and every liveness property is decided on it.
//
// States are stored packed (model.Layout) in an open-addressing table: about
// 26 bytes per state for the reference configurations, or about 15 with
// Options.Compact (leaf indices instead of words, no parent per state). The
// search uses every core (level-synchronous search over one store whose
// hash table the goroutines update lock-free); the states are numbered as a
// sequential search numbers them, so the counts, the liveness graph and the
// counterexamples do not depend on the number of goroutines or on the
// timing. Liveness properties are then decided one per goroutine. Symmetry
// reduction (Options.Symmetry) stores one state per class of states equal up
// to a permutation of the workers and of tasks with identical programs.
//
// Beyond RAM, Bitstate searches depth first with a Bloom filter of the
// states seen (SPIN's supertrace): a real counterexample, or Unknown with a
// coverage estimate, never Holds. SwarmMember diversifies N such searches
// (seeds, successor orders, depth bounds), run anywhere; MergeSwarm
// combines their SwarmResults into one verdict and a combined coverage
// estimate.
//
// Example:
//
//	r, err := checker.Explore(ctx, model.Config{Workers: 3, Tasks: 4, Pendings: 2},
//		checker.Options{Property: checker.EventuallyDone})
//	if err == nil && r.Verdict == checker.Violated {
//		for _, s := range r.Counterexample.Steps {
//			fmt.Println(s.Step) // "WORKER-STEAL w1 takes t3 from w0"
//		}
//	}
//
// # Spec coverage
//
// A CoverageSpace is the reachable state space of one closed configuration,
// with every transition, its rule variant ("WAKE scheduled onto local",
// "TASK-SUSPEND NOTIFIED, re-queued onto global (local full)", ...) and the
// states an executor cannot reach by design, computed from declared
// Exclusions. A Coverage projects recorded runs onto it (coverage_project.go
// states the mapping) and reports visited / reachable states and
// transitions, the firings of each variant, and the unvisited states in
// classes ("a task NOTIFIED, a local queue full"). A conforming event after
// which no closed run is in the run's state is a CoverageOutsideError, a
// conformance failure. Path gives the model checker's shortest run to a
// state, which `verify cover --strategy guided` realizes on a real executor.
//
//	sp, _ := checker.NewCoverageSpace(ctx, model.Config{Workers: 2, Tasks: 3, Pendings: 1, Wakes: 1}, checker.CoverageOptions{})
//	cv := checker.NewCoverage(sp)
//	res, _ := cv.Add(header, events) // res.Err: a conformance failure
//	fmt.Print(cv.Report(10))
package checker
