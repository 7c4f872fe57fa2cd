package executor

import "sync"

// KitConfig says what a Kit runs. Workers is the number of worker
// goroutines (0 means 1). Schedule puts a task that became QUEUED on the
// executor's queue: after a spawn, after a wake of a WAITING task, after a
// poll during which the task was woken; the Kit calls it exactly once per
// time the task becomes QUEUED, from any goroutine. Work is the loop of
// worker w; it returns when Park says the executor shuts down.
//
// Recorder, if set, receives the Kit's events, as Kit.SetRecorder. With a
// recorder, Schedule must call Pushed (or PushedTo) inside the critical
// section of its push, and the executor's take should call Took (or
// TookFrom) inside the critical section of its pop: see kit_record.go.
type KitConfig struct {
	Workers  int
	Schedule func(t *JoinHandle)
	Work     func(w int)
	Recorder Recorder
}

// Kit is the machinery of the built-in executors, exported so that an
// executor of your own needs only its queue and its loop: the tasks with
// the model's state word (QUEUED, RUNNING, WAITING, NOTIFIED, DONE) and the
// transitions of SPAWN, WAKE, TASK-SUSPEND and TASK-COMPLETE; their Handle
// (Join, and Poll to await one task from another); the accounting of Wait
// and Close; the identity of the worker goroutines (so that Wait, Close
// and Join from inside a task return ErrWaitInTask instead of
// deadlocking); panics and Failed values turned into the task's error, a
// Goexit into a failure and a new worker; and parking of idle workers.
//
// A correct executor on a Kit, with a FIFO queue (examples/customexec has
// it whole, checked with properties.Run):
//
//	func (e *Exec) Spawn(f executor.Future) (executor.Handle, error) { return e.kit.Spawn(f) }
//	func (e *Exec) work(w int) { e.kit.Loop(w, e.pop, e.hasWork) } // pop: the head of e's queue, or nil
//	func (e *Exec) Wait() error  { return e.kit.Wait() }
//	func (e *Exec) Close() error { return e.kit.Close() }
//
// An executor on a Kit reports its events (executor.Reporter) by handing
// its recorder to SetRecorder and marking each push with Pushed and each
// take with Took, inside their critical sections; the Kit records the rest
// (kit_record.go), so its traces are checked against the model like a
// built-in executor's (examples/customexec does it). PollOnce records no
// takes or poll beginnings: an executor that polls without waiting for
// wakes follows no policy of the model.
//
// Create it with NewKit; the zero Kit is not usable. Safe for concurrent
// use. Cost per task: one allocation, as for the built-in executors.
type Kit struct {
	b        base
	schedule func(t *JoinHandle)
	work     func(w int)
	wmu      sync.Mutex // when recording: held by a wake from WAITING until its push is recorded
}

// NewKit returns a Kit. Its workers start at the first Spawn.
func NewKit(c KitConfig) *Kit {
	k := &Kit{schedule: c.Schedule, work: c.Work}
	k.b.init(c.Workers, k.work)
	if c.Recorder != nil {
		k.SetRecorder(c.Recorder)
	}
	return k
}

// SetScheduler makes the Kit's goroutines pass through s
// (executor.Controllable): call it from the executor's own SetScheduler,
// before the first Spawn; once the workers run it does nothing. Under s
// the workers are started through s.Go, the Kit yields before each spawn,
// wake and poll, after each poll (before the worker's next pop), and at a
// registration, and every wait (Park, Wait, Close, Join) is an s.Block, so
// an executor on a Kit gets controlled interleavings, guided coverage and
// replayable failures with no other code. Its own critical sections (the
// push of Schedule, the pop) must not block or yield: under s one
// goroutine runs at a time, so a lock is never found held.
func (k *Kit) SetScheduler(s Scheduler) { k.b.SetScheduler(s) }

// Spawn is SPAWN: it counts a new task, makes it QUEUED and hands it to
// Schedule. It fails with ErrNilFuture for a nil f and ErrClosed after
// Close.
func (k *Kit) Spawn(f Future) (Handle, error) {
	t, err := k.b.spawnTask(f, k)
	if err != nil {
		return nil, err
	}
	if k.b.rec != nil {
		k.scheduleRec(t) // IDLE → QUEUED in Pushed
		return (*JoinHandle)(t), nil
	}
	t.state.Store(stQueued)
	k.schedule((*JoinHandle)(t))
	return (*JoinHandle)(t), nil
}

// wake implements owner: the WAKE rule. A wake that finds the task WAITING
// makes it QUEUED and schedules it; any other wake is one CAS (NOTIFIED, or
// coalesced, or late).
func (k *Kit) wake(t *task) {
	k.b.yield(PointWake)
	if k.b.rec != nil {
		k.wakeRec(t)
		return
	}
	for !k.b.wakeNoPush(t, -1) {
		old := t.state.Load()
		if old&stMask == stWaiting && t.state.CompareAndSwap(old, to(old, stQueued)) {
			k.schedule((*JoinHandle)(t))
			return
		}
	}
}

func (k *Kit) joinCtl() *base { return &k.b }

// Run polls t, which Schedule queued and the caller took from its queue,
// once on worker w: RUNNING, then DONE (its future returned Ready, or
// Failed, or panicked: Join returns the value or the error), or WAITING
// (Pending), or, if it was woken during the poll, QUEUED again through
// Schedule. Only worker w calls it, for a task it took.
func (k *Kit) Run(t *JoinHandle, w int) {
	tk := (*task)(t)
	k.b.yield(PointPoll)
	defer k.b.yield(PointPop) // the worker's next pop comes after a yield
	k.begin(tk, w)
	cx := NewContext(tk.waker(), w)
	v, ready, perr := k.b.pollOn(tk, w, cx)
	if err := failure(tk, v, ready, perr); err != nil {
		k.b.recordFailure(tk, w, err)
		k.b.complete(tk, w, nil, err)
		return
	}
	if ready {
		k.b.complete(tk, w, v, nil)
		return
	}
	if k.b.suspend(tk, w) {
		return
	}
	if k.b.rec != nil {
		k.scheduleRec(tk) // NOTIFIED → QUEUED in Pushed, with the poll's end
		return
	}
	// NOTIFIED during the poll: queue it again (TASK-SUSPEND).
	for {
		old := tk.state.Load()
		if tk.state.CompareAndSwap(old, to(old, stQueued)) {
			break
		}
	}
	k.schedule(t)
}

// Park blocks idle worker w until Notify, unless hasWork (called after w
// announced itself idle, so a Notify after it is not lost) finds work. It
// returns false once the executor shuts down: the worker's loop returns.
func (k *Kit) Park(w int, hasWork func() bool) bool {
	if k.b.lot.stop.Load() {
		return false
	}
	// Under a Scheduler, a yield even when hasWork finds work at once: a
	// loop whose pop finds nothing where hasWork saw something (another
	// worker's queue) then still passes through the Scheduler, which
	// bounds it, instead of spinning outside it.
	k.b.yield(PointPark)
	k.b.park(w, hasWork)
	return !k.b.lot.stop.Load() || hasWork()
}

// Loop is the loop of worker w that Work usually is: take a task with pop
// (nil when w finds nothing to take), Run it, repeat; when pop finds
// nothing, Park with hasWork; return once the executor shuts down. An
// executor that polls without waiting for wakes (PollOnce) writes its own.
func (k *Kit) Loop(w int, pop func(w int) *JoinHandle, hasWork func() bool) {
	for {
		if t := pop(w); t != nil {
			k.Run(t, w)
		} else if !k.Park(w, hasWork) {
			return
		}
	}
}

// Notify wakes one parked worker, if any: call it after each push.
func (k *Kit) Notify() { k.b.lot.notify() }

// Wait implements Executor.Wait: it blocks until every task spawned so far
// is DONE (ErrWaitInTask from inside a task).
func (k *Kit) Wait() error { return k.b.Wait() }

// Close implements Executor.Close: no new tasks, wait for the spawned
// ones, stop the workers (their Park returns false).
func (k *Kit) Close() error { return k.b.Close() }

// InWorker returns the index of the worker the caller runs on, or -1.
func (k *Kit) InWorker() int { return k.b.inWorker() }

// PollOnce polls t once on worker w, for executors that poll without
// waiting for wakes (round robin, busy polling in time slices): the task
// becomes RUNNING at its first poll and stays so between polls, so a wake
// only marks it NOTIFIED and never calls Schedule; the executor keeps the
// task in its own rotation until PollOnce returns true: the task is DONE
// (Ready, Failed or a panic, as for Run). Such an executor polls
// spuriously, which the waker contract allows (executor.SpuriousPoller).
// Only one worker at a time may poll t.
func (k *Kit) PollOnce(t *JoinHandle, w int) (done bool) {
	tk := (*task)(t)
	k.b.yield(PointPoll)
	defer k.b.yield(PointPop)
	if tk.state.Load()&stMask == stQueued {
		k.b.running(tk)
	}
	cx := NewContext(tk.waker(), w)
	v, ready, perr := k.b.pollOn(tk, w, cx)
	if err := failure(tk, v, ready, perr); err != nil {
		k.b.complete(tk, w, nil, err)
		return true
	}
	if ready {
		k.b.complete(tk, w, v, nil)
		return true
	}
	return false
}
