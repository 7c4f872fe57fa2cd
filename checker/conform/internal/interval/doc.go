// Package interval is the conformance checker's reading of the takes of a
// trace recorded under "order":"intervals" (package conform; trace format
// v1.1), by lock-free recording. A
// queue operation of a lock-free executor has no instant at which the
// recorder could draw its Seq: it carries the ticks Call and Return of one
// logical clock drawn just before it starts and just after it returns, and
// took effect at some unknown tick between them. Its Seq is its Call for a
// push (spawn, wake or requeue onto a queue) and its Return for a take: a
// push is placed as early as it could have taken effect and a take as late,
// so the push of a task always comes before its take.
//
// The checker replays the events at their Seq, as under "order":"seq". When
// a take's premise fails there, it looks for an order of the overlapping
// operations that the intervals allow and the model accepts. Two operations
// overlap when neither returned before the other was called. The orders
// tried, each cheap and local to the take:
//
//   - reorder: a take of task x from the end of a FIFO queue (the global
//     queue; a victim's local queue, for a steal; the owner's local queue
//     when the owner takes FIFO) finds tasks y in front of x. Each such y
//     either was pushed by a push that overlaps x's push (y's push returned
//     after x's was called: x may have landed first, and y then stays in
//     the queue behind it), or is promised to be taken by a take that
//     overlaps this one (an obligation, below). The model then takes x from
//     the head.
//   - own local queue: a take by w from elsewhere (GLOBAL-STEAL,
//     WORKER-STEAL) finds w's own local queue non-empty: its tasks are
//     promised to be taken by takes that overlap this one (thieves that
//     emptied it before w looked). Not with lifo-slot; with steal-half
//     the tasks the steal moves go behind them (see batch steals).
//   - global queue: a take whose premise reads the global queue
//     (WORKER-STEAL's "global = ∅", POLL-LOCAL's global check) finds it
//     non-empty after the existing relaxed premise did not apply: each of
//     its tasks either was pushed by a push that had not returned when the
//     worker began to look (see the relaxed premises of Conformance), or is
//     promised to be taken by a take that overlaps this one.
//   - batch steals (steal-half from FIFO deques, the first task run): the
//     batch's size is left open (ivOpenBatch); a take of the batch's next
//     task from the thief's deque, or a take from the victim's deque of a
//     task behind the batch's first k tasks, shows that the steal moved
//     them (never more than the model's half, nor steal-max); a steal of
//     x whose queue holds tasks in front of x took x and the tasks after
//     it, the ones in front being promised to overlapping takes as in
//     reorder. A batch stolen from a thief whose own batch is still open
//     begins with that batch's tasks (each task of a batch notes which
//     deque holds it in the model). The take of a batch's task is tried
//     with the global queue hidden too, as in global queue; a take of a
//     batch's task behind its next ones from the thief's deque moves them
//     all, the ones in front then owed as in reorder (ivBatchTakeUpTo).
//     A steal from a thief's empty deque of a task still behind another
//     in victim v's is a claim as for steal-last below (ivClaim): the
//     thief's next take must be a steal from v running that other task,
//     its batch holding the claimed ones (ClaimAfterFIFO); claimed
//     tasks in front of the one stolen were taken first, by steals of the
//     thief's deque overlapping this one (they owe, as in reorder), and
//     each claimed task has left the queues when the thief's steal comes,
//     or, for a longer claim (tasks behind the one stolen, which the
//     stealer's open batch may move), is still in the thief's deque; those
//     stay there, in front, and the thief's batch held no more.
//     A task a
//     pop behind it gave to its thief's batch (ivBatchPrefix) goes back
//     to the victim for that thief's next steal from it, if called before
//     the pop returned (ivTakeBack). A steal that cut the tasks in front
//     of x (owed) opens its batch behind them, and the batch's next task
//     is at the head for ivBatchTake with owed tasks in front of it.
//   - batch steals that run their last task (steal-last, LIFO deques):
//     the bound is half of the victim's deque as the thief read it
//     (ivBatchBefore), with the global queue hidden if need be (as in
//     global queue); the tasks a batch moved meet the obligations of the
//     takes it overlaps; an earlier-placed batch steal from the same
//     deque that the steal overlaps gives back the tasks up to x (this
//     steal's CAS came first, ivGiveBack); and a steal of x from a thief
//     whose deque is empty, x still in victim v's, stands for a batch
//     steal from v the thief has in flight (its CASes done, its event not
//     yet come): the thief's next take must be that steal, called in
//     time, its batch holding the tasks (ivClaim). The thief's deque may
//     also hold other tasks (the reading after that): its batch was
//     published behind them, and steals overlapping this one took them
//     first (they owe, as in reorder). A steal accepted as a
//     batch of x alone, the tasks in front owed, may later be shown to
//     have held the owed tasks right in front of x, when the thief's
//     deque gives one of them up (ivForward), within half of what it read.
//   - a batch steal's own deque (both flavours) may still hold tasks that
//     thieves of it took, their events still to come: hidden for the
//     step, owed as in own local queue, kept in front of what it moved.
//
// Under steal-half the first order accepted is not final: a take much
// later may refute it where another order, or another size of a batch,
// would have conformed. A take that fails is then searched (the orders
// are numbered, and a batch's size, a claim's length and the tasks of an
// open batch owed are readings past them; the search in package conform):
// the trace is replayed with an earlier take read otherwise, the takes
// that moved the failed take's task and the ones overlapping it first,
// within a bound of takes, replays and kept events; the first replay that
// gets past the failure goes on. A spent bound is Unknown, never a pass.
//
// An obligation "t is taken by a take overlapping take X" is checked when
// t's next take comes (its Call must be before X's Return) or, if none
// comes, at the end of the trace; a failed obligation is a violation at
// take X, the take it was for, naming the take that should have come and
// its interval. The model's state is never cloned: the orders are tried by
// moving one task within a queue or hiding a queue for one rule
// application, so the cost stays O(1) per event on a trace whose
// operations overlap a bounded number of others; obligations are a map
// from task to the earliest deadline. On the global queue, the index of
// package globalq finds and moves the task, and finds the tasks that
// owe, in O(log n) each however many operations overlap (n pushes all
// overlapping, taken in reverse: O(n log n) in all, was O(n²)); a local
// queue is still scanned. Report.Reordered counts
// the takes accepted this way. Under "order":"seq" none of this runs.
package interval
