package properties

import (
	"fmt"

	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Work conservation: a worker that parks while a task waits in a queue it
// could take, and stays parked while other workers go on polling, leaves
// work undone that it could do (a push that forgets to wake a parked
// worker: an overflow to the global queue, a re-queue from a worker). The
// check follows the trace through the model (package checker/conform) and
// asks it, at each poll's beginning, which parked workers have a take
// enabled (model.Takeable); a worker that has one through more than
// conserveBound polls begun by other workers fails, named with the queue
// and the task.
//
// Only controlled cases are checked, and not under PCT: there a worker
// that was notified runs within a few choices (the Kit and the built-in
// executors park on a notification, not on the presence of work, under a
// Scheduler, so a lost notification shows), while on the Go scheduler a
// notified worker may wait milliseconds for a CPU, and PCT runs a
// low-priority goroutine only when nothing else can: neither says whether
// the executor forgot to wake it.

// conserveBound is how many polls other workers may begin while a parked
// worker has a take enabled: a notified worker runs within a few of the
// controller's choices (each poll is several), so a correct executor stays
// far below it.
const conserveBound = 16

// reportsControllable says whether ex reports its trace and can be
// controlled: what work conservation needs.
func reportsControllable(ex executor.Executor) bool {
	_, ok := ex.(executor.Controllable)
	return ok && reports(ex)
}

func checkConserve(o *Observation) error {
	if !o.Controlled || o.PCT || o.Header == nil || len(o.Events) == 0 {
		return nil
	}
	evs := o.Events
	if !o.complete() {
		evs = gapless(evs)
	}
	pol, err := conform.HeaderPolicy(*o.Header)
	if err != nil {
		return nil // conformance says why
	}
	m, err := model.NewOpenTrace(pol.Config)
	if err != nil {
		return nil
	}
	c, err := conform.New(*o.Header)
	if err != nil {
		return nil
	}
	parked := map[int]int{} // worker → index of its park event
	since := map[int]int{}  // worker → polls begun by others while it had a take
	for i, e := range evs {
		if c.Step(e) != nil {
			return nil // a trace outside the model: conformance's failure
		}
		w := int(e.Worker)
		switch e.Kind {
		case traces.KindPark:
			parked[w], since[w] = i, 0
		case traces.KindUnpark, traces.KindStop:
			delete(parked, w)
		case traces.KindPollBegin:
			for v, at := range parked {
				if v == w {
					continue
				}
				st, ok := m.Takeable(c.State(), v)
				if !ok {
					since[v] = 0
					continue
				}
				if since[v]++; since[v] > conserveBound {
					return fmt.Errorf("worker %d, parked since event %d, stayed parked while the %s queue held a task it could take (last: task %d, by %s) through %d polls begun by other workers (the last: event %d, seq %d); a push that leaves work for a parked worker must wake it (work conservation)",
						v, at+1, st.TakeQueue(), st.Task, st.Rule, since[v], i+1, e.Seq)
				}
			}
		}
	}
	return nil
}
