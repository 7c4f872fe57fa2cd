// Package model is the executable specification of async task executors:
// the state of an executor, the rules that change it, the policies that
// parameterize the rules, the safety invariants, and deliberately broken
// variants of the rules.
//
// Vocabulary. A task is a future. Polling it returns Ready or Pending; a
// future that returns Pending has registered its waker and calls Wake when it
// can make progress. A task is IDLE (not spawned), QUEUED (in exactly one
// queue), RUNNING (polled by one worker), WAITING (Pending returned, waker
// registered), NOTIFIED (woken while RUNNING: re-queued when the poll
// returns) or DONE. There is a global queue and, under work stealing, a
// bounded local deque per worker whose owner end and steal end differ.
//
// The rules are the transitions, one atomic step each, named as everywhere
// in execspec: SPAWN, POLL-LOCAL, GLOBAL-STEAL, WORKER-STEAL, POLL-PENDING,
// TASK-SUSPEND, TASK-COMPLETE and WAKE. Model.Apply checks a rule's premise
// and applies its conclusion; a failed premise is a *PremiseError naming the
// premise. Model.Next enumerates every enabled rule instance of a state, in a
// fixed order, for the model checker in package checker/explore.
//
// The model is pure: no goroutines, no clock, no randomness. A closed model
// (New) knows the futures' programs and bounds the wakes, so its state space
// is finite; an open model (NewOpen) takes both from a recorded trace.
//
// Example:
//
//	m, _ := model.New(model.Config{Policy: model.WorkSteal, Workers: 2, Tasks: 3, Pendings: 1})
//	s := m.Init()
//	_ = m.Apply(s, model.Step{Rule: model.SPAWN, Task: 1, Worker: -1, Victim: -1, Dest: model.Global})
//	err := m.Apply(s, model.Step{Rule: model.WORKER_STEAL, Task: 1, Worker: 0, Victim: 1})
//	// err: WORKER-STEAL: premise global = ∅ fails: the global queue holds [t1]
package model
