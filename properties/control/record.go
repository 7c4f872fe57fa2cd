package control

import "github.com/execspec/execspec/traces"

// Recorder is Recorder (the same method set, so either is
// assignable to the other), declared here so that this package does not
// import package executor.
type Recorder interface {
	Record(e traces.Event)
}

// NoteEvent mixes an executor's event into the checksum of the run (see
// Note): every field but Detail, which holds panic stacks with addresses
// that differ from run to run. Only a controlled goroutine may call it.
func (c *Controller) NoteEvent(e traces.Event) {
	c.Note(e.Seq)
	c.Note(e.Call<<32 ^ e.Return)
	c.Note(uint64(e.Task))
	c.Note(uint64(uint32(e.Worker))<<32 | uint64(uint32(e.Victim)))
	c.Note(uint64(uint32(e.Queue))<<32 | uint64(e.Kind)<<24 | uint64(e.Source)<<16 | uint64(e.Result)<<8 | uint64(e.Outcome))
	c.Note(uint64(e.Rule))
}

// Recorder returns an Recorder that notes every event in the
// run's checksum (NoteEvent) and then passes it to next, if next is not
// nil. Set it on a Reporter executor that runs under c, so that a replay
// checks the executor's events too:
//
//	ex.SetScheduler(c)
//	ex.SetRecorder(c.Recorder(myRecorder))
//
// The executor records from its controlled goroutines, one at a time, as
// NoteEvent requires.
func (c *Controller) Recorder(next Recorder) Recorder {
	return noting{c, next}
}

type noting struct {
	c    *Controller
	next Recorder
}

func (n noting) Record(e traces.Event) {
	n.c.NoteEvent(e)
	if n.next != nil {
		n.next.Record(e)
	}
}
