// Package ants checks github.com/panjf2000/ants/v2 with execspec's pool
// properties through an adapter that uses only its documented API (see
// ../README.md for the versions and the bugs).
package ants

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/panjf2000/ants/v2"

	"github.com/execspec/execspec/internal/testenv"
	"github.com/execspec/execspec/properties/pool"
	"github.com/execspec/execspec/properties/stress"
)

// newAnts adapts an ants pool: Submit, Tune as Resize; the drawn options
// set the capacity, the idle-worker expiry, the bound on blocked submitters
// (MaxBlockingTasks, refusing beyond it) and nonblocking mode. Release does
// not wait for running tasks, so Close waits for them first.
func newAnts(o pool.Options) pool.Pool {
	opts := []ants.Option{ants.WithPanicHandler(func(any) {})}
	if o.IdleTimeout > 0 {
		opts = append(opts, ants.WithExpiryDuration(o.IdleTimeout))
	}
	if o.QueueBound > 0 {
		opts = append(opts, ants.WithMaxBlockingTasks(o.QueueBound))
	}
	if o.Nonblocking {
		opts = append(opts, ants.WithNonblocking(true))
	}
	p, err := ants.NewPool(o.Capacity, opts...)
	if err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	return &pool.Adapter{
		SubmitFunc: func(f func()) error {
			wg.Add(1)
			err := p.Submit(func() { defer wg.Done(); f() })
			if err != nil {
				wg.Done()
			}
			return err
		},
		ResizeFunc: p.Tune,
		CloseFunc:  func() error { wg.Wait(); p.Release(); return nil },
	}
}

var antsConfig = pool.Config{
	Space: pool.Space{
		Capacity:     [2]int{1, 4},
		QueueBound:   [2]int{0, 8},
		IdleTimeout:  [2]time.Duration{5 * time.Millisecond, 200 * time.Millisecond},
		Nonblocking:  true,
		QueueRefuses: true,
	},
	Panics: pool.PanicsRecovered,
	Goexit: true,
	// ants' capacity bounds its worker goroutines (Running counts them,
	// idle or busy), and Tune to less only stops new ones: a worker idle
	// in the queue still takes the next task, and one above the capacity
	// leaves after its task (revertWorker) or when the purge expires it.
	// ants says running workers may exceed the capacity for a while and
	// fall back to it in time (issues #70, #154), so more tasks than the
	// new capacity may run just after a shrink: that is not a defect.
	LazyShrink: true,
}

// antsLib acknowledges the capacity race of issue #374 (fixed in
// v2.11.4) in the versions before the fix, so that the versions between
// the Tune fix (v2.7.5) and it are checked for every other defect; and
// one lost wakeup that no release fixes: a worker signals the pool's
// condition variable without p.lock, so that a submitter between its
// capacity check and cond.Wait() misses it. Each acknowledgement is that
// defect reached through one trigger, in the versions it holds in:
//
//   - Tune's broadcast (progress/Resize, from v2.7.5; repro/);
//   - a worker that dies of a task's panic or runtime.Goexit, whose
//     deferred cond.Signal() runs without p.lock (progress/task panic
//     and task Goexit, from v2.4.4; found under control,
//     testdata/schedules/TestAnts.progress-task_panic.schedule at
//     v2.11.4);
//   - a worker that the purge stops (its idle time past ExpiryDuration):
//     it dies the same way, and a submitter that found no idle worker
//     and Running() == Cap() just before misses its signal and waits for
//     the purge's next tick to find the pool dormant (progress/idle
//     expiry, from v2.4.4, which the suite names under control from the
//     worker's exit after the purge ran;
//     testdata/schedules/TestAnts.progress-idle_expiry.schedule at
//     v2.11.4, ….v2.7.5.schedule at v2.7.5; v2.12.1 has the same code);
//   - a worker that leaves after its task because the pool is over its
//     capacity (revertWorker: Running() > Cap()), with a Broadcast and a
//     Signal made without p.lock (progress/worker retired, from v2.4.4,
//     which the suite names from the worker's exit right after its
//     task): after Tune to less, both workers of a pool tuned from two
//     to one retire at once and a submitter past its check misses both
//     (testdata/schedules/TestAnts.progress-worker_retired.schedule at
//     v2.11.4, ten minutes under control); before v2.11.4 also the
//     workers that the race of #374 spawns past the capacity
//     (testdata/schedules/TestAnts.progress-worker_retired.v2.7.5.schedule,
//     found as progress/task end).
//
// A progress finding with any other trigger (a Submit, a task end) is
// reported. Stress runs seldom see any of these, and cannot
// name an idle expiry: there such a stall is named after the Submit or
// task end that began it, and reported.
var antsLib = pool.Library{
	Module: "github.com/panjf2000/ants/v2",
	Func:   ants.NewPool,
	Known: []pool.KnownDefect{
		{Key: pool.CapacityBound, Fixed: "v2.11.4", Why: "ants #374"},
		{Key: pool.Progress + "/" + pool.WorkerRetired, From: "v2.4.4", Why: "a worker that leaves after its task (over the capacity: after Tune to less, or spawned past it by the race of ants #374 before v2.11.4) signals without the pool's lock"},
		{Key: pool.Progress + "/Resize", From: "v2.7.5", Why: "Tune signals without the pool's lock"},
		{Key: pool.Progress + "/task panic", From: "v2.4.4", Why: "a dying worker signals without the pool's lock"},
		{Key: pool.Progress + "/task Goexit", From: "v2.4.4", Why: "a dying worker signals without the pool's lock"},
		{Key: pool.Progress + "/" + pool.IdleExpiry, From: "v2.4.4", Why: "a worker the idle purge expires dies signalling without the pool's lock"},
	},
}

func TestAnts(t *testing.T) {
	antsLib.Check(t, pool.Target{New: newAnts, Config: antsConfig})
}

// TestAntsSmall checks small cases (up to 16 tasks from 2 submitters):
// the case bench/poolctl.sh measures controlled cases per second on.
func TestAntsSmall(t *testing.T) {
	cfg := antsConfig
	cfg.MaxTasks, cfg.MaxSubmitters = 16, 2
	antsLib.Check(t, pool.Target{New: newAnts, Config: cfg})
}

// TestAntsCapacityRace aims at the race of ants issue #374: retrieveWorker
// released the pool's lock after checking Running() < Cap() and before the
// new worker incremented Running, so concurrent Submits could all pass the
// check and run more tasks at once than the capacity. The race can only
// happen while a fresh pool spawns its workers, so each repetition is a
// fresh pool, with two submitters pinned to distinct CPUs and started
// together, and tasks that sleep long enough to overlap.
func TestAntsCapacityRace(t *testing.T) {
	const runs = 300
	sleep := pool.Task{Work: pool.WorkSleep, Amount: 300}
	w := pool.Tasks(2, sleep, sleep, sleep, sleep)
	failed, first := stress.RepeatAll(runs, func(int) error {
		return pool.RunWorkloadOptions(newAnts, w, pool.Config{Capacity: 2, Pin: true})
	})
	if failed > 0 {
		var f *pool.Finding
		if errors.As(first, &f) {
			t.Errorf("property %s violated in %d of %d runs; first: %v", f.Property, failed, runs, first)
		} else {
			t.Errorf("%d of %d runs failed; first: %v", failed, runs, first)
		}
	}
}

// TestAntsDetectionRate measures how often one run of the targeted
// workload shows the capacity race, with submitters pinned to distinct
// CPUs and not. It takes a while, so it runs only with POOLCHECK_RATES=1:
//
//	POOLCHECK_RATES=1 go test -modfile=go.buggy.mod -run DetectionRate -v ./ants
func TestAntsDetectionRate(t *testing.T) {
	testenv.OptIn(t, "POOLCHECK_RATES")
	const runs = 500
	for _, pin := range []bool{false, true} {
		for _, subs := range []int{2, 4, 8} {
			var tasks []pool.Task
			for range 2 * subs {
				tasks = append(tasks, pool.Task{Work: pool.WorkSleep, Amount: 300})
			}
			w := pool.Tasks(subs, tasks...)
			fails := 0
			for range runs {
				if pool.RunWorkloadOptions(newAnts, w, pool.Config{Capacity: 2, Pin: pin}) != nil {
					fails++
				}
			}
			t.Logf("pinned %-5v %d submitters: capacity exceeded in %3d of %d runs (%.1f%%)", pin, subs, fails, runs, 100*float64(fails)/runs)
		}
	}
}
