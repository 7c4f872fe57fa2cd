package broken

// The fairness the bases state (executor.Bounded), and what the starvation
// bugs of the catalogue break. Both bases are fair for the few tasks of a
// fairness case: the queue base polls in FIFO order (or by priority with
// aging), the work-stealing base checks the global queue every few polls
// and bounds the LIFO slot. Their exact bounds depend on the interleaving of
// their workers; they state a generous one, far above what a fair run
// needs and far below what a starving one reaches.

// fairnessBound is the bound the bases state, in polls of other tasks.
const fairnessBound = 300

// FairnessBound implements executor.Bounded.
func (e *queueExec) FairnessBound(n int) int { return fairnessBound }

// FairnessBound implements executor.Bounded.
func (e *stealExec) FairnessBound(n int) int { return fairnessBound }

// PollsSpuriously implements executor.SpuriousPoller: both bases poll a
// task only after its spawn or a wake.
func (e *queueExec) PollsSpuriously() bool { return false }

// PollsSpuriously implements executor.SpuriousPoller.
func (e *stealExec) PollsSpuriously() bool { return false }
