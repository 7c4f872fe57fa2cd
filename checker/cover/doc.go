// Package cover measures spec coverage: which states and transitions of
// the closed model of one configuration recorded runs of a real executor
// went through, per rule variant and per class of unvisited state.
//
// # What it checks
//
// A Space is the reachable state space of one closed configuration, with
// every transition, its rule variant ("WAKE scheduled onto local",
// "TASK-SUSPEND NOTIFIED, re-queued onto global (local full)", ...) and the
// states an executor cannot reach by design, computed from declared
// Exclusions. A Coverage projects recorded runs onto it (coverage_project.go
// states the mapping): each event is first checked by the conformance
// checker (package conform), then matched to a run of at most three
// transitions of the space. A conforming event after which no closed run is
// in the run's state is an *OutsideError, a conformance failure too.
//
// # What it needs
//
// A model.Config for the space (ClosedConfig derives it from an executor's
// trace header and a workload), and the runs' traces: header and events,
// as traces.Reader.All yields them. The space is built by a breadth-first
// search of the model; Options.MaxStates bounds it.
//
// # What it returns
//
// Add returns a ProjectResult per run: new states and transitions, a
// conformance failure (Err), or why the run left the configuration (Left).
// Report returns a *Report: visited / reachable states and transitions,
// the firings of each variant, and the unvisited states in classes ("a
// task NOTIFIED, a local queue full"), with an example of each. Space.Path
// gives the model checker's shortest run to a state, which `verify cover
// --strategy guided` realizes on a real executor.
//
// # Example
//
//	sp, _ := cover.NewSpace(ctx, model.Config{Workers: 2, Tasks: 3, Pendings: 1, Wakes: 1}, cover.Options{})
//	cv := cover.New(sp)
//	res, _ := cv.Add(header, events) // res.Err: a conformance failure
//	fmt.Print(cv.Report(10))
package cover
