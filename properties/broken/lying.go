package broken

import (
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// Lying wraps ex, an executor that reports its events (executor.Reporter
// and executor.Describer), so that every event it records goes through
// tamper on its way to the recorder r: tamper may pass it on, change it,
// drop it or add others, and the trace no longer tells what ex did. The
// suite's recorded checks (conformance, linearizability) must catch it;
// a tamper that passes every event on unchanged must raise no alarm.
func Lying(ex executor.Executor, tamper func(e traces.Event, r executor.Recorder)) executor.Executor {
	return &lying{ex, tamper}
}

type lying struct {
	executor.Executor
	tamper func(e traces.Event, r executor.Recorder)
}

func (l *lying) SetRecorder(r executor.Recorder) {
	l.Executor.(executor.Reporter).SetRecorder(recorderFunc(func(e traces.Event) { l.tamper(e, r) }))
}

func (l *lying) Describe() traces.Header { return l.Executor.(executor.Describer).Describe() }

type recorderFunc func(traces.Event)

func (f recorderFunc) Record(e traces.Event) { f(e) }
