// Package executor is the Future/Waker API that futures and executors
// share, and seven real concurrent executors that record what they do so
// that their runs can be checked against the model.
//
// # Vocabulary
//
// A Future is polled by an executor: Ready(v) or Pending. A task is a
// spawned future with a state: QUEUED, RUNNING, WAITING (Pending returned),
// NOTIFIED (woken while RUNNING), DONE. A Waker wakes one task (the WAKE
// rule): WAITING → QUEUED, RUNNING → NOTIFIED, anything else unchanged, so
// many wakes before a poll are one poll and a wake during a poll is never
// lost. The rule names (SPAWN, POLL-LOCAL, GLOBAL-STEAL, WORKER-STEAL,
// POLL-PENDING, TASK-SUSPEND, TASK-COMPLETE, WAKE) are those of package
// model.
//
// # Executors
//
//   - FIFO: one queue, one worker, wake-driven.
//   - Wakeable: one shared FIFO queue, W workers.
//   - WorkSteal: W workers, a global injector queue and a bounded local
//     queue per worker, stealing, parking, an optional LIFO slot and a
//     global-queue check interval (WorkStealConfig).
//   - Priority: a priority queue with the model's aging (a task passed
//     over Aging times runs first: no task starves).
//   - Timeslice: a task woken during its poll is re-polled at once, up to
//     its slice.
//   - Retry: a failed task is run again from a fresh future, at most N times.
//   - Monitored: wraps any executor and counts what it does.
//
// Builtin and BuiltinNames give them by name, with default sizes.
//
// # Writing an executor
//
// Kit is the machinery of the built-in executors, exported: the tasks with
// their state word and the transitions of the rules, their Handle
// (JoinHandle), Wait and Close, the identity of the worker goroutines
// (ErrWaitInTask), failures (a panic, or a Ready Failed value), a Goexit in
// a future, parking. An executor on a Kit holds its queue and its loop
// (Kit.Loop, or its own around Kit.Run, for wake-driven polling;
// Kit.PollOnce for round robin or busy polling); examples/customexec is one in sixty lines, controllable
// through Kit.SetScheduler. For an executor with its own task type the
// pieces come one by one (parts.go): WorkerIDs, Tally, Promise, PollTask,
// and TaskState for the state word (examples/ownexec).
//
// What an executor states about itself it is held to, and nothing more:
// Bounded (a fairness bound in polls), BoundedWait (in time),
// FairnessPromiser (false: no fairness promised at all; without any of the
// three it is held to a default bound), SpuriousPoller (whether it may
// poll a task that was not woken). A
// Retryable future is run again from fresh futures by Retry.
//
// Every built-in executor implements the optional abilities: Reporter (its
// events go to a Recorder: one nil check per event when off), Controllable
// (its goroutines pass their yield points through a Scheduler: one nil check
// per point when off), Describer (the model policy and parameters its trace
// is checked against), and Bounded or Prioritized where they apply. Their
// wakers are Registrars: a future that calls Context.Register records the
// registration of its waker (POLL-PENDING) in the trace.
//
// Under a Scheduler, every goroutine that calls into the executor (Spawn,
// Wake, Wait, Join, Close) must itself be controlled (started through the
// Scheduler's Go, or the one it runs first): the executor's blocking waits
// become Scheduler.Block calls, which only controlled goroutines may make.
// Yield points: PointSpawn, PointPush, PointPop, PointSteal, PointWake,
// PointPark, PointPoll, PointRegister (Context.Register), and PointLock before every queue lock; no yield
// point lies inside a critical section.
//
// # Task state machine
//
// Each task has one atomic state word: the state in the low bits, a
// version counting transitions above them. Every transition is a
// compare-and-swap from a freshly loaded word, so no transition acts on a
// stale state (no ABA), no task is polled by two workers at once or after
// DONE, and a wake that races with the end of a poll either finds RUNNING
// (and leaves NOTIFIED, which the poller turns into a re-queue) or finds
// WAITING (and schedules the task itself).
//
// # Events
//
// The built-in executors record trace format v1.1 (their headers say
// "minor":1). Every one records a stop when Close has stopped its workers;
// a late wake after it is counted (LateWakes) but not recorded, since no
// event follows a stop. Priority puts each task's priority on its spawns,
// wakes and requeues and its aging in the header's config, so that
// `verify check` checks every take against the model's pick; Retry puts
// the id of the future on every poll-begin and poll-end (a new id per
// fresh future, so a re-poll of a finished future would be caught) and
// ends the poll of a Ready Failed value with result error, with no panic
// event (a v1.0 trace has no error result: there it is a panic). (An executor
// built on a Kit records what its own Describe declares: no stop.)
//
// Each event's Seq is drawn from one atomic logical clock per executor,
// between the load and the CAS of the transition it reports and, for queue
// operations, inside the queue's critical section; sorting a trace by Seq
// therefore gives an order in which every transition and every queue
// operation is legal. Queue operations (SPAWN's push, takes, a WAKE's push,
// re-queues) also carry Call and Return ticks on the same clock, such that
// Call < Seq ≤ Return: Call is the clock's value just before the
// operation's own draw, inside its critical section, and Return its value
// where the operation took effect (its Seq; for a take, the Seq of the
// poll-begin drawn with it). So [Call, Return] contains the operation's
// linearization point, and Return(A) < Call(B) means A took effect before
// B. Seq numbers are unique but not dense. Task ids count from 1 per
// executor, in spawn order; Worker is -1 outside the workers. At most
// MaxWorkers workers run.
//
// # Recording
//
// An event is written, as a 24-byte traces.Packed, into a buffer where its
// operation takes effect: into the worker's own buffer (no lock, no
// atomic), or, for goroutines outside the workers, into a buffer under the
// queue lock the operation holds anyway, or under a mutex of its own.
// Events reach the Recorder from these buffers while the executor holds
// none of its queue locks (only the mutex of the buffer being handed
// over):
//
//   - A BatchRecorder (traces.Log is one) gets them in batches of a few
//     hundred (RecordPacked): when a buffer fills, when a worker runs out
//     of work (so an idle or hung executor has handed over everything it
//     did), when a worker stops, and before Wait and Close return. Every
//     event of the tasks Wait waited for, up to their ends, is in the
//     recorder when Wait returns, including wakes from goroutines outside
//     the executor (a late wake of a task already DONE may come after):
//     an event is written, and made visible to Wait, before its effect can
//     let a task finish, and Wait collects every buffer (it never waits for
//     a worker to get anywhere: tasks spawned while Wait runs do not hold
//     it up). After Close, a late wake's event goes to the recorder at once
//     (or, after a stop, nowhere).
//   - Any other Recorder, and any recorder under a Scheduler, gets each
//     event through Record just after the operation that made it, in the
//     order a controlled run makes them. A snapshot taken while a Wake from
//     outside is in flight can then lack that wake's event although its
//     effect is already visible; the trace is complete once every call
//     into the executor has returned.
//
// Events with a Detail (panics) always go through Record. Monitored, a
// Recorder itself, gets its inner executor's events one by one.
//
// Recording costs one clock draw per event, an atomic store per task (the
// worker publishes its buffer before a task's end is made known), and no
// allocation; the clock's cache line is shared by every goroutine that
// records, which is most of what recording costs on several cores. See
// BENCHMARKS.md.
//
// # Bad use
//
//   - Spawn(nil) returns ErrNilFuture; Spawn after Close returns ErrClosed
//     (also from inside a task while Close waits).
//   - A future that panics fails its task: the panic is recorded with the
//     stack (KindPanic), Join returns a *PanicError, and the executor keeps
//     running. A future may also fail by returning Failed{Err} as Ready.
//   - A wake after the task is DONE is ignored and counted (LateWakes,
//     OutcomeLate).
//   - A second Close returns ErrClosed.
//   - Wait, Close or Join called from inside one of the executor's own
//     tasks returns ErrWaitInTask instead of deadlocking a worker.
//
// # Example
//
//	ex := executor.NewWorkSteal(executor.WorkStealConfig{})
//	h, _ := ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
//		return 42, true
//	}))
//	v, err := h.Join() // 42, nil
//	_ = ex.Close()
package executor
