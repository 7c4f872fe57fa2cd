// Package explore model-checks the executable specification (package
// model): it visits every state reachable in one closed configuration
// (model.Config: a policy, W workers, T tasks with their programs) and
// decides a property on all of them.
//
// # What it checks
//
// Explore searches breadth first, so a safety counterexample is a shortest
// one. Safety checks every invariant of model.Invariants in every state,
// that takes find their task QUEUED, and that a state with nothing enabled
// has every task DONE. Liveness properties (EventuallyDone, WokenPolled,
// Fairness) are decided on the explored graph under weak fairness of each
// process: the spawner, each worker and each task's event source. Their
// counterexamples are lassos: a path, then a cycle that a fair run repeats
// forever. ExploreAll checks several properties on one exploration: the
// graph is built once and every liveness property is decided on it.
//
// # What it needs
//
// A model.Config and Options: the property, and budgets (MaxStates,
// MaxBytes, Timeout; or cancel the context). States are stored packed
// (model.Layout) in an open-addressing table: about 26 bytes per state for
// the reference configurations, or about 15 with Options.Compact (leaf
// indices instead of words, no parent per state). The search uses every
// core (level-synchronous search over one store whose hash table the
// goroutines update lock-free); the states are numbered as a sequential
// search numbers them, so the counts, the liveness graph and the
// counterexamples do not depend on the number of goroutines or on the
// timing. Liveness properties are then decided one per goroutine. Symmetry
// reduction (Options.Symmetry) stores one state per class of states equal
// up to a permutation of the workers and of tasks with identical programs.
//
// Beyond RAM, Bitstate searches depth first with a Bloom filter of the
// states seen (SPIN's supertrace): a real counterexample, or Unknown with a
// coverage estimate, never Holds. SwarmMember diversifies N such searches
// (seeds, successor orders, depth bounds), run anywhere; MergeSwarm
// combines their SwarmResults into one verdict and a combined coverage
// estimate.
//
// # What it returns
//
// A *Result: the verdict (checker.Holds, checker.Violated, or
// checker.Unknown with Message saying which budget was spent), the
// property that failed, the counterexample, and the statistics (states,
// transitions, depth, bytes, elapsed). For the work-stealing policy the
// counts equal those SPIN and TLC find on an independent encoding of the
// same rules (the tests assert them). A counterexample is also a trace:
// Counterexample.Events writes it in the trace format (HeaderOf gives its
// header), and Diagnose replays it through the conformance checker
// (package conform) to name its root cause, the first step that is not an
// enabled rule of the correct model.
//
// # Example
//
//	r, err := explore.Explore(ctx, model.Config{Workers: 3, Tasks: 4, Pendings: 2},
//		explore.Options{Property: explore.EventuallyDone})
//	if err == nil && r.Verdict == checker.Violated {
//		for _, s := range r.Counterexample.Steps {
//			fmt.Println(s.Step) // "WORKER-STEAL w1 takes t3 from w0"
//		}
//	}
package explore
