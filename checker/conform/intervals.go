package conform

import (
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Lock-free recording (header "order":"intervals"): the reading of takes
// in the orders their intervals allow is package interval's Reader
// (checker/conform/internal/interval; its doc states the orders tried).
// ivHost is what it needs of the checker: the take applied as at its Seq,
// a violation recorded, a worker's last Seq, and the tasks a batch steal
// moved, for the search over readings (conform_interval_batch_search.go).
type ivHost struct{ c *Conformance }

func (h ivHost) TakeStep(st model.Step, e traces.Event) error { return h.c.takeStep(st, &e) }

func (h ivHost) Fail(idx int, e traces.Event, r model.Rule, premise, reason string) error {
	return h.c.fail(idx, &e, r, premise, reason)
}

func (h ivHost) LastSeq(w int) uint64 { return h.c.workers[w].lastSeq }

func (h ivHost) Moved(ts []int32) {
	if c := h.c; c.sr != nil {
		c.sr.moved(c.fr.N-1, ts)
	}
}

// reordered is how many takes the interval reader accepted in an order
// other than their Seq.
func (c *Conformance) reordered() int {
	if c.iv == nil {
		return 0
	}
	return c.iv.Reordered()
}
