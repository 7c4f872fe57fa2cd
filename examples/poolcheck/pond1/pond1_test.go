// Package pond1 checks github.com/alitto/pond (v1) with execspec's pool
// properties through an adapter that uses only its documented API (see
// ../README.md for the versions).
package pond1

import (
	"context"
	"testing"
	"time"

	"github.com/alitto/pond"

	"github.com/execspec/execspec/properties/pool"
)

// newPond1 adapts a pond v1 pool: Submit (blocks while the buffer of
// QueueBound tasks is full), StopAndWait as Close, the cancellation of
// the pool's parent context (pond.Context) as Cancel; the drawn options
// set the workers, the buffer and the idle timeout.
func newPond1(o pool.Options) pool.Pool {
	ctx, cancel := context.WithCancel(context.Background())
	opts := []pond.Option{pond.Context(ctx), pond.PanicHandler(func(any) {})}
	if o.IdleTimeout > 0 {
		opts = append(opts, pond.IdleTimeout(o.IdleTimeout))
	}
	p := pond.New(o.Capacity, o.QueueBound, opts...)
	return &pool.Adapter{
		SubmitFunc: func(f func()) error { p.Submit(f); return nil },
		CancelFunc: cancel,
		CloseFunc:  func() error { p.StopAndWait(); cancel(); return nil },
	}
}

var pond1Config = pool.Config{
	Space: pool.Space{
		Capacity:    [2]int{1, 4},
		QueueBound:  [2]int{0, 8},
		IdleTimeout: [2]time.Duration{5 * time.Millisecond, 200 * time.Millisecond},
	},
	Panics: pool.PanicsRecovered,
}

// pond1Lib acknowledges a stall that no v1 release fixes: a worker
// decrements the idle count only once it has taken a task from the
// channel, so a submitter that comes right after a hand-off (or while
// another submitter takes the one idle worker) still sees a worker idle,
// starts none, and waits on the unbuffered channel behind a busy worker
// while the pool is below its maximum. The stall is judged after
// whatever began the stretch of room: a Submit, or a task's panic whose
// worker stayed (controlled cases 4,764 and 43,330 at v1.9.1, see
// README.md); v1.9.2 has the same code. The purge reaches it too
// (progress/idle expiry: it stops one of two workers, the submitters
// that come next count the other idle and start none, and tasks queued
// before theirs take it; testdata/schedules/TestPond1.progress-idle_expiry.schedule;
// and progress/worker retired: a worker takes the purge's stop, queued
// behind tasks, right after its task, so the suite sees it leave without
// waiting; testdata/schedules/TestPond1.progress-worker_retired.schedule;
// and progress/task end: a submitter finds the pool at its maximum, two
// workers counted idle though one has already taken a task, and starts
// none; the purge then stops both, its two nils sent before that
// submitter's task, which waits behind them for the one worker another
// submit started, busy with a held task, on a pool of two;
// testdata/schedules/TestPond1.progress-task_end.schedule).
// Three more come from the idle
// purge (maybeStopIdleWorker), found with early timers: it lowers the
// worker and idle counts under the pool's mutex but hands its stop
// signal (a nil task) to whichever worker takes it next from the channel,
// later. A worker counted idle that takes a queued task before the nil
// runs it while a submit, seeing the lowered count, starts a new worker
// with the next task: two tasks at once on a pool of one (capacity). A
// submitter that found the pool at its maximum and sends after the purge
// has stopped the only worker waits for good (no-hang). And v1.9.1's
// drainTasks, run by a worker when the pool's context is cancelled,
// calls tasksWaitGroup.Done for every value it drains, the purge's nil
// included: "sync: negative WaitGroup counter" kills the process
// (no-crash; the counter, one short, may go negative at a later Done,
// in executeTask or worker); v1.9.2 skips nil tasks there. And v1.9.1's
// stop closes the tasks channel before it waits for the purge, which,
// past its count check, sends its nil on the closed channel (no-crash in
// maybeStopIdleWorker; v1.9.2 waits first). The hang is named after
// whatever began the stall (task end, Submit, task panic), or, under
// control, after the idle expiry of the worker the purge stopped
// (testdata/schedules/TestPond1.no-hang-idle_expiry.schedule), or after
// the worker's retirement when the purge's nil, queued behind a task,
// reaches it right after that task
// (testdata/schedules/TestPond1.no-hang-worker_retired.schedule). Schedules in
// testdata/schedules/, see README.md.
var pond1Lib = pool.Library{
	Module: "github.com/alitto/pond",
	Func:   pond.New,
	Known: []pool.KnownDefect{
		{Key: pool.Progress + "/Submit", Why: "a submitter counts on an idle worker that another submit already took"},
		{Key: pool.Progress + "/task panic", Why: "a submitter counts on an idle worker that another submit already took"},
		{Key: pool.Progress + "/" + pool.IdleExpiry, Why: "the idle purge stops one of two workers; submitters count the other idle and start none, while tasks queued before theirs take it"},
		{Key: pool.Progress + "/" + pool.WorkerRetired, Why: "the idle purge's stop signal, queued behind tasks while the counts were lowered, is taken by a worker right after its task; submitters count a worker idle that is not and start none"},
		{Key: pool.Progress + "/task end", Why: "a submitter that saw the pool at its maximum starts no worker; the idle purge then stops both workers, counted idle though one has already taken a task, and their nils, sent before its task, leave it waiting behind the one busy worker"},
		{Key: pool.CapacityBound + "/Submit", Why: "the idle purge lowers the worker count before its stop signal reaches a worker, which takes a queued task instead"},
		{Key: pool.NoHang + "/task end", Why: purgeHang},
		{Key: pool.NoHang + "/Submit", Why: purgeHang},
		{Key: pool.NoHang + "/task panic", Why: purgeHang},
		{Key: pool.NoHang + "/" + pool.IdleExpiry, Why: purgeHang},
		{Key: pool.NoHang + "/" + pool.WorkerRetired, Why: purgeHang + " (its nil, queued behind a task, is taken right after that task)"},
		{Key: pool.NoCrash + "/crash in github.com/alitto/pond.drainTasks", Fixed: "v1.9.2", Why: purgeNil},
		{Key: pool.NoCrash + "/crash in github.com/alitto/pond.(*WorkerPool).executeTask.func1", Fixed: "v1.9.2", Why: purgeNil},
		{Key: pool.NoCrash + "/crash in github.com/alitto/pond.worker", Fixed: "v1.9.2", Why: purgeNil},
		{Key: pool.NoCrash + "/crash in github.com/alitto/pond.(*WorkerPool).maybeStopIdleWorker", Fixed: "v1.9.2", Why: "StopAndWait closes the tasks channel before the purge has ended; a purge past its count check sends its nil on the closed channel"},
	},
}

const (
	purgeHang = "the idle purge stops the only worker while a submitter that saw the pool at its maximum is about to send"
	purgeNil  = "drainTasks counts the idle purge's nil stop signal as a task: the WaitGroup counter goes negative at that Done or a later one"
)

func TestPond1(t *testing.T) {
	pond1Lib.Check(t, pool.Target{New: newPond1, Config: pond1Config})
}
