package executor

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/execspec/execspec/traces"
)

// describe returns ex's header, or an empty one.
func describe(ex Executor) traces.Header {
	if d, ok := ex.(Describer); ok {
		return d.Describe()
	}
	return traces.Header{}
}

// runRecorded runs w on a fresh executor with a recorder, under a timeout,
// closes it, and checks the recorded events. A hang is an error naming the
// lifecycle problems the events show so far.
func runRecorded(newEx func() Executor, w workload, e env, timeout time.Duration) error {
	rec := &traces.Log{}
	return runWith(newEx, rec, rec.Events, w, e, timeout)
}

// runWith is runRecorded with recorder rec, whose events are events().
func runWith(newEx func() Executor, rec Recorder, events func() []traces.Event, w workload, e env, timeout time.Duration) error {
	ex := newEx()
	r, ok := ex.(Reporter)
	if !ok {
		return errors.New("not a Reporter")
	}
	r.SetRecorder(rec)
	type result struct {
		n   int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		n, err := w.run(ex, e)
		if cerr := ex.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close: %w", cerr))
		}
		ch <- result{n, err}
	}()
	select {
	case res := <-ch:
		n := res.n
		if res.err != nil {
			n = -1
		}
		return errors.Join(res.err, checkEvents(describe(ex), events(), n, res.err == nil))
	case <-time.After(timeout):
		return fmt.Errorf("hang after %v: %w", timeout, checkEvents(describe(ex), events(), -1, false))
	}
}

// runWorkloads runs the table of workloads, each on a fresh executor of
// newEx recording into the recorder newRec returns with its events, and
// checks the events.
func runWorkloads(t *testing.T, newEx func() Executor, newRec func() (Recorder, func() []traces.Event)) {
	for _, w := range workloads {
		t.Run(w.name, func(t *testing.T) {
			rec, events := newRec()
			if err := runWith(newEx, rec, events, w, plainEnv(), 20*time.Second); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// inLog records into a traces.Log.
func inLog() (Recorder, func() []traces.Event) {
	l := &traces.Log{}
	return l, l.Events
}

func TestWorkloads(t *testing.T) {
	for _, name := range BuiltinNames() {
		newEx, _ := Builtin(name)
		t.Run(name, func(t *testing.T) { runWorkloads(t, newEx, inLog) })
	}
}

// TestWorkloadsVariants runs the table on non-default configurations.
func TestWorkloadsVariants(t *testing.T) {
	variants := map[string]func() Executor{
		"worksteal_small_fifo_half_slot": func() Executor {
			return NewWorkSteal(WorkStealConfig{Workers: 3, LocalCap: 4, OwnerFIFO: true, StealHalf: true, LIFOSlot: true, GlobalInterval: 5})
		},
		"worksteal_one_worker_slot": func() Executor {
			return NewWorkSteal(WorkStealConfig{Workers: 1, LocalCap: 2, LIFOSlot: true})
		},
		"wakeable_4":   func() Executor { return NewWakeable(4) },
		"priority_3":   func() Executor { return NewPriority(PriorityConfig{Workers: 3, Aging: 1}) },
		"timeslice_2":  func() Executor { return NewTimeslice(TimesliceConfig{Workers: 2, Slice: 5}) },
		"monitored_ff": func() Executor { return NewMonitored(NewFIFO()) },
	}
	for name, newEx := range variants {
		t.Run(name, func(t *testing.T) { runWorkloads(t, newEx, inLog) })
	}
}

// TestWorkloadsUnrecorded runs the table with recording off.
func TestWorkloadsUnrecorded(t *testing.T) {
	for _, name := range BuiltinNames() {
		newEx, _ := Builtin(name)
		t.Run(name, func(t *testing.T) {
			for _, w := range workloads {
				ex := newEx()
				if _, err := w.run(ex, plainEnv()); err != nil {
					t.Fatalf("%s: %v", w.name, err)
				}
				if err := ex.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
