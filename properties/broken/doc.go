// Package broken is a catalogue of small executors with one bug each, bugs
// that real executors have had, to show that the property suite catches
// them; and the two correct executors they vary, to show that it raises no
// false alarm.
//
// The bases:
//   - queue: one shared queue (FIFO, or by priority with aging) under one
//     mutex, a few workers that park through a parker;
//   - steal: workers with bounded local queues (a ring of atomic slots,
//     taken with a CAS), a global queue, a global check every few polls, an
//     optional LIFO slot for a task the running task spawned or woke, steals from the
//     other workers, overflow of a full local queue to the global queue.
//
// A third base, deep (deep.go), is a work-stealing executor that reports
// every step, registrations included, so that its runs project onto the
// closed model; DeepCatalogue varies it with six bugs that show only in
// deep states (a full deque robbed while its owner's task is registered, a
// NOTIFIED task re-queued onto a full deque, ...), for `verify cover`'s
// guided exploration to find.
//
// Lying wraps any executor that reports its events so that its trace
// lies (an event dropped, changed or added): what the recorded checks,
// and they alone, must catch.
//
// Both keep each task's state in one atomic word (QUEUED, RUNNING, WAITING,
// NOTIFIED, DONE), so that exactly one party queues a task after each poll,
// and park idle workers with an announce, re-check, wait protocol. Every
// shared word is an atomic or under a mutex: the bugs are logical races,
// not data races, so the suite runs them under -race.
//
// Example:
//
//	for _, b := range broken.Catalogue() {
//		rep := properties.Check(b.New, properties.Config{StopAtFirst: true})
//		fmt.Println(b.Name, rep.Verdict()) // violated, for every one
//	}
//
// Both bases are executor.Controllable: under a Scheduler their goroutines,
// locks, parking and waits go through it (yield points at push, pop, steal,
// wake, park, the end of a poll), so the suite explores their interleavings
// one goroutine at a time and a failure replays exactly. Without one they
// run on the Go scheduler, yielding only where real executors do work (an
// idle worker before it parks, a thief between reading and claiming).
//
// Both are also executor.Reporter and executor.Describer (record.go):
// every event is made under one record lock, with the operation, and a bug
// is recorded as what the code did (a second push, a wake dropped by a
// cloned waker, two takes of one task), so that a failure's trace names
// the root cause where the defect shows in a trace at all.
//
// The executors are for tests: a wake costs a goroutine-id lookup in the
// work-stealing base, and Wait from inside a task is not detected.
package broken
