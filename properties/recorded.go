package properties

import (
	"errors"
	"fmt"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/checker/lin"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// reports says whether ex reports its events and describes its policy, so
// that its trace can be checked against the model.
func reports(ex executor.Executor) bool {
	_, rep := ex.(executor.Reporter)
	_, desc := ex.(executor.Describer)
	return rep && desc
}

// complete says whether o's trace is whole: the case ended by Wait and
// Close, or by Close, so every event was recorded. A trace cut by a hang or
// a violation may lack an event another one follows, and is not checked.
func (o *Observation) complete() bool {
	return (o.End == EndWait || o.End == EndClose) && o.Header != nil
}

// checkConform replays the recorded trace through the model of the
// executor's policy.
//
// A controlled case stopped early (at a violation, or a deadlock) is
// checked too, up to its first gap in Seq: under the controller one
// goroutine runs at a time and an event is recorded where its Seq is drawn,
// so the events up to the first missing number are every event up to it,
// and the first departure from the model among them (the root cause of the
// violation that stopped the case) is real. Only the steps are checked,
// not what a whole trace must end with.
func checkConform(o *Observation) error {
	evs := o.Events
	whole := o.complete()
	if !whole {
		if !o.Controlled || o.Header == nil {
			return nil
		}
		evs = gapless(evs)
	}
	c, err := conform.New(*o.Header)
	if err != nil {
		// The executor describes a policy the model does not know: nothing
		// to check against, which is the executor's statement to fix.
		return fmt.Errorf("the executor's header cannot be checked: %w", err)
	}
	for _, e := range evs {
		if err := c.Step(e); err != nil {
			if !whole {
				var cerr *conform.Error
				if errors.As(err, &cerr) {
					return conformFailure{cerr}
				}
				return nil
			}
			break
		}
	}
	if !whole {
		return nil
	}
	r := c.Finish()
	if r.Verdict == checker.Violated && r.Err != nil {
		return conformFailure{r.Err}
	}
	return nil
}

// gapless returns the events of evs (sorted by Seq) up to the first
// missing Seq.
func gapless(evs []traces.Event) []traces.Event {
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq != evs[i-1].Seq+1 {
			return evs[:i]
		}
	}
	return evs
}

// conformFailure is the failure of the conformance check: the message and
// the model state, and the rule it breaks (for the runner, which does not
// report again a defect of a rule already reported).
type conformFailure struct{ err *conform.Error }

func (f conformFailure) Error() string { return f.err.Msg + "\n" + f.err.State }
func (f conformFailure) Unwrap() error { return f.err }

// linBudget bounds the linearizability check of one case.
const linBudget = 2 * time.Second

// checkLinear checks the recorded history for linearizability against the
// sequential specifications of the model. A budget spent is not a failure.
func checkLinear(o *Observation) error {
	if !o.complete() {
		return nil
	}
	res, err := lin.Check(*o.Header, o.Events, lin.Options{Budget: linBudget, Complete: o.End == EndWait})
	if err != nil {
		return fmt.Errorf("the history cannot be checked: %w", err)
	}
	if res.Verdict != checker.Violated {
		return nil
	}
	var errs []error
	for _, c := range res.Checks {
		if c.Verdict == checker.Violated {
			errs = append(errs, fmt.Errorf("%s: %s", c.Spec, c.Detail))
		}
	}
	return errors.Join(errs...)
}

// Trace returns the header and events of the case o observed, for writing
// with traces.WriteFile, or false when the executor reports no events.
func (o *Observation) Trace() (traces.Header, []traces.Event, bool) {
	if o.Header == nil {
		return traces.Header{}, nil, false
	}
	return *o.Header, o.Events, true
}
