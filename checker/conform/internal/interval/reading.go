package interval

import (
	"fmt"
	"slices"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// The readings of a take, in the order tried: 0 the take at its Seq, 1
// to 4 the batch orders of Relax (steal-last: ivStealLast, ivGiveBack,
// ivClaim, ivClaim over the thief's own tasks; FIFO: ivBatchTake,
// ivBatchPrefix, ivClaim, ivTakeBack), then
// the reorder of Relax with nothing hidden, the own deque hidden, the
// global queue hidden, both (TryReorder on); then, for a batch steal,
// its size (TryCut on) and the length of a claim (TryClaim on),
// and for a take from a FIFO deque with an open batch, how many of the
// batch's tasks it moved there that overlapping takes took (TryOwe
// on; Reading). The checker, on its own, keeps the first the model
// accepts.
const (
	TryReorder = 5
	TryCut     = TryReorder + 4
	TryMax     = 32 // sizes read: crossbeam's MAX_BATCH
	TryClaim   = TryCut + TryMax
	TryOwe     = TryClaim + TryMax
	Tries      = TryOwe + TryMax
)

// Reading sets up reading p (Tries) of take st and returns the
// first order Relax tries. Below TryCut, p is that order. From
// TryCut on, p reads the size of a batch steal, n = p - TryCut:
// from a LIFO deque (steal-last), the batch ends at the task it runs and
// leaves the first n+1 tasks in front of it, taken before the thief read
// the deque by overlapping takes (they owe, as in reorder; ivStealCut);
// from a FIFO deque, the batch moves at most n tasks besides the one it
// runs (ivOpenBatch), whatever order accepts the take. From
// TryClaim on, p reads a claim (ivClaim, steal-last) of the task
// stolen from a thief with a batch steal in flight, whose batch held n+1
// more tasks behind it that the claim moves too. From TryOwe on, p reads a take
// from a FIFO deque with an open batch (ivBatchOwe): the batch held its
// first n+1 tasks, and takes overlapping this one took them; then the
// reorder.
//
// It returns -1 for a reading that does not apply to st (a size for a
// take that is no steal, or one the deque cannot hold; more owed tasks
// than the open batch has): a reading that reads nothing new is no
// reading, so that the search never replays the same one twice.
func (c *Reader) Reading(st model.Step, p int) int {
	c.size, c.extra, c.in, c.owe = -1, 0, 0, 0
	c.unowed = c.unowed[:0]
	s := c.s
	v := st.Victim
	switch {
	case p < TryCut:
		return p
	case p >= TryOwe:
		from := st.Worker
		if st.Rule == model.WORKER_STEAL {
			from = v
		}
		c.owe = p - TryOwe + 1
		if from < 0 || from >= len(c.batch) || len(c.batch[from].tasks) < c.owe {
			return -1
		}
		return TryReorder
	case p >= TryClaim:
		// From a FIFO deque, the tasks a longer claim moves behind the one
		// stolen stay in the thief's deque, the stealer's open batch
		// (ClaimBefore).
		c.extra = p - TryClaim + 1
		return 3
	case st.Rule != model.WORKER_STEAL || v < 0 || v >= len(s.Local):
		return -1
	}
	n := p - TryCut
	c.size = n
	if c.m.Config().StealLast {
		if n+1 >= slices.Index(s.Local[v], int32(st.Task)) {
			return -1 // x within the first n+1 (ivStealCut)
		}
		return TryCut
	}
	held := len(s.Local[v]) // the most a batch from v may move (ivOpenBatch)
	if v < len(c.batch) {
		held += len(c.batch[v].tasks)
	}
	if n >= held {
		return -1
	}
	return 0
}

// LastReading is the last reading (Tries) take st has.
func (c *Reader) LastReading(st model.Step) int {
	cfg := c.m.Config()
	switch {
	case st.Rule == model.WORKER_STEAL && cfg.StealHalf && cfg.StealLast:
		return TryOwe - 1
	case st.Rule == model.WORKER_STEAL && cfg.StealHalf, st.Rule == model.POLL_LOCAL && cfg.StealHalf && cfg.OwnerFIFO:
		return Tries - 1
	}
	return TryCut - 1
}

// ivBatchOwe moves the first k tasks of w's open batch (FIFO) into w's
// deque, in front, as ivBatchTake moves one, if each is where the batch
// expects it, and the take's task x too if it comes next in the batch;
// the take then finds them in front of x, owed to overlapping takes (the
// reorder), and the batch is closed unless it held x (it held no more,
// or they would be in front of x too). It returns whether it moved them.
func (c *Reader) ivBatchOwe(w, k int, x int32) bool {
	if w < 0 || w >= len(c.batch) || len(c.batch[w].tasks) < k {
		return false
	}
	saved := c.ivSaveBatches()
	ts := slices.Clone(c.batch[w].tasks[:k])
	if b := c.batch[w].tasks; len(b) > k && b[k] == x {
		ts = append(ts, x) // the batch held x too, behind them
	}
	for _, y := range ts {
		if !c.ivBatchTake(w, y) {
			c.ivRestoreBatches(saved)
			c.moved = false
			return false
		}
	}
	slices.Reverse(c.s.Local[w][:len(ts)]) // ivBatchTake put each at the front
	c.moved = len(ts) > k
	return true
}

// ivStealCut is the batch steal st (take e, steal-last) of x from v with
// the first n tasks in front of x left out: overlapping takes took them
// before the thief read the deque, so its half is of the rest. They go
// back to v's head, owed. It returns whether the step was accepted (and
// applied).
func (c *Reader) ivStealCut(idx int, e *traces.Event, st model.Step, n int) bool {
	s := c.s
	v, x := st.Victim, int32(st.Task)
	if v < 0 || v >= len(s.Local) || v == st.Worker {
		return false
	}
	q := s.Local[v]
	if k := slices.Index(q, x); n >= k {
		return false // x within the first n: reorder reads that
	}
	front := slices.Clone(q[:n])
	s.Local[v] = q[n:]
	ok := c.ivStealLast(idx, e, st)
	s.Local[v] = append(front, s.Local[v]...)
	if !ok {
		return false
	}
	for _, y := range front {
		c.oweTask(y, idx, e, fmt.Sprintf("t%d was in front of the batch t%d ends on w%d's local queue", y, x, v))
	}
	return true
}
