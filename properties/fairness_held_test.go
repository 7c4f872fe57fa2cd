package properties

import (
	"testing"
	"time"
)

// A ready task polled by a worker that took it long ago (descheduled
// between its take and its poll, while the other worker polled others) does
// not count against the executor; one that a worker polling others all
// along passed over does.
func TestFairnessHeldByDescheduledWorker(t *testing.T) {
	for _, tc := range []struct {
		name       string
		pollerEnd  int64 // pollCount when the poller last ended a poll
		wantViolat bool
	}{
		{"taken early, polled late", 6, false},
		{"passed over by its poller", 590, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &caseRun{mode: fairPolls, bound: 10, workers: 2, violC: make(chan struct{})}
			p := &probe{r: r, id: 3, readyAt: 5, readySince: time.Now().Add(-time.Second)}
			r.workerSeen.Store(0b11)
			for w := range 2 {
				r.workerPolls[w].Store(100) // both ended polls since p was ready
			}
			r.workerEndAt[1].Store(600)
			r.workerEndAt[0].Store(tc.pollerEnd)
			r.polledReady(p, 600, 0)
			if got := len(r.viols) > 0; got != tc.wantViolat {
				t.Fatalf("violation %v, want %v (%v)", got, tc.wantViolat, r.viols)
			}
		})
	}
}
