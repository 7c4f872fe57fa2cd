package properties

import (
	"math/bits"
	"time"
)

// starveLimit is how many polls of other tasks a ready endless task may
// wait before the fairness check calls it starved, when the executor states
// no bound of its own: far above any fair policy's delay for the few tasks
// of a fairness case (a global-queue check every 61 polls included), and
// reached in well under a millisecond by an unfair one.
const starveLimit = 1000

// starveLimitControlled is starveLimit for controlled cases.
const starveLimitControlled = 300

// allWorkersPolledSince reports whether every worker seen so far has begun
// polls since p became ready: at least one each, on the Go scheduler; under
// a controller, a fair share of the starvation limit each. A ready task
// passed over while some worker polled little or nothing may be held by
// that worker, descheduled (by the operating system, or by a schedule such
// as PCT's that runs a goroutine only when nothing else can) between its
// take and its poll; only when every worker kept polling others is it
// starved. Called with p.mu held.
func (r *caseRun) allWorkersPolledSince(p *probe) bool {
	seen := r.workerSeen.Load()
	workers := int64(bits.OnesCount64(seen))
	need := int64(1)
	if r.ctl != nil && workers > 0 {
		need = max(1, r.budget/(4*workers))
	}
	for w := range r.workerLast {
		if seen&(1<<w) == 0 {
			continue
		}
		if w < len(r.workerPolls) {
			if r.workerPolls[w].Load()-p.readyShares[w] < need {
				return false
			}
		} else if r.workerLast[w].Load() <= p.readyAt {
			return false
		}
	}
	return true
}

// starveTime is how long a ready task must also have waited, by the clock,
// before a poll count counts against the executor (black-box cases only): a
// small margin on top of the rule that every worker must have polled other
// tasks meanwhile (allWorkersPolledSince), which is what tells a starved
// task from one held by a worker the operating system descheduled between
// its take and its poll.
const starveTime = 10 * time.Millisecond
