// Package globalq is the index of the conformance checker's global queue
// (package conform). Two checks take a task from anywhere in
// the global queue, not only from its head: the priority policy (its pick,
// and a v1.0 trace's takes of any task) and order intervals (a take
// reordered before the overlapping pushes in front of it). Done on the
// model's queue alone, such a take costs O(n) on a queue of n tasks: a
// search for the task, a scan for the pick or for the tasks in front of
// it, a shift of the tasks before it, and, for aging, an update of every
// queued task. A trace that keeps n tasks queued then costs O(n²). The
// index makes each O(log n):
//
//   - the queue's order is kept as tickets: the tasks in the order they
//     were queued (a push appends, a take removes, nothing else reorders
//     the global queue), with holes where tasks left;
//   - the model's slice holds the same tasks, with the head (the lowest
//     ticket) always first, but the others in any order: a task taken from
//     the middle is swapped to the head, taken there by the model, and the
//     new head swapped in. The order is rebuilt from the tickets (O(n))
//     whenever someone looks at it: Lanes, State, the messages that list
//     the queue (BoundedLanes, called after every event by replay, reads
//     the first tasks in order from the tickets instead);
//   - priority (v1.1): a heap of the queued tasks by priority, then
//     ticket, and aging as a count of takes: a task queued when takes had
//     taken k tasks has been passed over takes−k times (each take while
//     it is queued takes another task), so the first aged task, if any, is
//     the head;
//   - order intervals: a tree of the return ticks of the queued tasks'
//     pushes, to find the tasks in front of a take whose push returned
//     before a tick, each once (a task owes at most one obligation).
//
// Other traces (no priority, order seq) do not build it: their global
// queue is taken from its head only, O(1).
package globalq
