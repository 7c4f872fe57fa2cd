// Package coverage measures the spec coverage of a controllable
// executor: which states and transitions of the closed model of its
// configuration its runs reach, and whether any run leaves the model.
// It is what `verify cover` runs; properties.Config.Coverage adds it to
// the property suite with a goal.
//
// What it needs: a built-in executor by name (Executors; Model gives the
// closed configuration it follows) or a constructor (Config.New) of an
// executor that is executor.Controllable, executor.Reporter and
// executor.Describer (its header says the policy); or, with Config.T set
// in a test binary that runs under the instrumented engine
// (properties.UnderEngine), one whose package is instrumented, its hook
// unused.
//
// What it does: Run runs the configuration's workload (Tasks tasks, each
// Pending Pendings times, each registration woken Wakes times, by the
// task's own event source or by another task's poll) under controlled
// interleavings chosen by a strategy (Strategies): random, PCT,
// model-guided (the model checker's shortest path to a state no run has
// visited, realized as a schedule plus a workload, then a corpus of
// schedules that found new states: guided.go), and bounded depth-first
// search with or without pruning on model states (exhaustive.go). Each
// run's trace is projected onto the closed model (checker/cover).
//
// What it returns: a Result with the coverage report (per rule and rule
// variant, the unvisited states by class), the first conformance failure
// and when it came, the runs that failed, and the strategy's figures
// (GuidedStats, ExhaustiveStats); ResultJSON is the form `verify cover
// --json` prints. A bad configuration is an error. Budgets (runs, time, a
// goal) and the context stop the runs.
//
//	res, err := coverage.Run(ctx, coverage.Config{Executor: "worksteal", Strategy: "guided", Runs: 2000})
//	if err != nil { ... }
//	fmt.Println(res.Report) // states and transitions visited, per rule
//
// Job, JobFromEnv, WriteResult and ReadJobResult carry a run from
// `verify cover --no-hook` into a test binary built with the executor's
// package instrumented (properties/testdata/hookless) and its result back
// (job.go).
package coverage
