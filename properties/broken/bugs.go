package broken

import "github.com/execspec/execspec/executor"

// bug is a set of deliberate defects of a base executor. Every catalogue
// entry sets exactly one.
type bug uint32

const (
	bugLostWakeup        bug = 1 << iota // the NOTIFIED flag is cleared before it is checked
	bugDoubleEnqueue                     // a wake of a QUEUED task pushes it again
	bugRepollAfterReady                  // a retry re-polls the finished future
	bugStealOwnerEnd                     // a thief takes from the owner's end without a CAS
	bugOverflowDrops                     // a push to a full local queue drops the task
	bugParkNoRecheck                     // a parking worker does not look at the queues again
	bugPriorityNoAging                   // priorities without aging
	bugLIFOStarves                       // the LIFO slot is polled without a limit
	bugGlobalStarved                     // the global queue is not checked while local work exists
	bugCloneNoop                         // a cloned waker wakes nothing
	bugShutdownDrops                     // Close drops the queued tasks
	bugLostWakeCheckPark                 // a wake between a worker's check and its park is lost
)

// Executor is one entry of the catalogue: a small executor with one bug
// that real executors have had.
type Executor struct {
	Name string // short, kebab-case
	Bug  string // one line: what is wrong
	Base string // the correct executor it varies: "queue" or "steal", with its configuration
	New  func() executor.Executor
}

// Catalogue returns the broken executors, each a correct base with exactly
// one bug. The property suite must catch every one.
func Catalogue() []Executor {
	q := func(cfg QueueConfig, b bug) func() executor.Executor {
		return func() executor.Executor { return newQueue(cfg, b) }
	}
	s := func(cfg StealConfig, b bug) func() executor.Executor {
		return func() executor.Executor { return newSteal(cfg, b) }
	}
	return []Executor{
		{"lost-wakeup", "the NOTIFIED flag is cleared before the re-check, so a wake during a poll is lost", "queue w=2", q(QueueConfig{Workers: 2}, bugLostWakeup)},
		{"double-enqueue", "a wake of a task that is already QUEUED pushes it a second time", "queue w=1", q(QueueConfig{Workers: 1}, bugDoubleEnqueue)},
		{"repoll-after-ready", "a retry of a panicked task re-polls the finished future instead of a fresh one", "queue w=1", q(QueueConfig{Workers: 1}, bugRepollAfterReady)},
		{"steal-owner-end", "a thief takes the owner's end of a local queue with a load and a store, no CAS", "steal w=2", s(StealConfig{Workers: 2}, bugStealOwnerEnd)},
		{"overflow-drops", "a push to a full local queue drops the task instead of moving it to the global queue", "steal w=2", s(StealConfig{Workers: 2}, bugOverflowDrops)},
		{"park-no-recheck", "a worker parks on the strength of its last failed look at the queues, without looking again", "queue w=1", q(QueueConfig{Workers: 1}, bugParkNoRecheck)},
		{"priority-no-aging", "tasks are taken by priority alone, so a busy high-priority task starves the others", "queue w=1 priority", q(QueueConfig{Workers: 1, Priority: true}, bugPriorityNoAging)},
		{"lifo-starves", "the LIFO slot is polled without a limit, so two tasks waking each other starve the queue", "steal w=1 lifo", s(StealConfig{Workers: 1, LIFOSlot: true}, bugLIFOStarves)},
		{"global-starved", "the global queue is never checked while local work exists", "steal w=1", s(StealConfig{Workers: 1}, bugGlobalStarved)},
		{"clone-wakes-nothing", "Waker.Clone returns a waker that wakes nothing", "queue w=2", q(QueueConfig{Workers: 2}, bugCloneNoop)},
		{"shutdown-drops", "Close stops the workers at once and drops the tasks still queued or waiting", "steal w=2", s(StealConfig{Workers: 2}, bugShutdownDrops)},
		{"lost-wake-check-park", "the unpark signal is sent without the park lock, so it can fall between a worker's check and its wait", "queue w=1", q(QueueConfig{Workers: 1}, bugLostWakeCheckPark)},
	}
}

// Bases returns the correct executors the catalogue varies, in each
// configuration it uses. The suite must find nothing wrong with them.
func Bases() []Executor {
	q := func(cfg QueueConfig) func() executor.Executor {
		return func() executor.Executor { return NewQueue(cfg) }
	}
	s := func(cfg StealConfig) func() executor.Executor {
		return func() executor.Executor { return NewSteal(cfg) }
	}
	return []Executor{
		{"queue-1", "", "queue w=1", q(QueueConfig{Workers: 1})},
		{"queue-2", "", "queue w=2", q(QueueConfig{Workers: 2})},
		{"queue-priority", "", "queue w=1 priority", q(QueueConfig{Workers: 1, Priority: true})},
		{"steal-1-lifo", "", "steal w=1 lifo", s(StealConfig{Workers: 1, LIFOSlot: true})},
		{"steal-1", "", "steal w=1", s(StealConfig{Workers: 1})},
		{"steal-2", "", "steal w=2", s(StealConfig{Workers: 2})},
	}
}
