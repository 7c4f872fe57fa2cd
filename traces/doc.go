// Package traces is the trace format of execspec: what an executor records,
// what a model-checker counterexample is written as, and what the checkers
// read.
//
// Vocabulary:
//   - An Event is one observation (spawn, take, poll-begin, poll-end, wake,
//     requeue, park, unpark, panic, register, stop) or one model step. Seq orders the events
//     of a run on one logical clock.
//   - A Packed is an executor's Event in 24 bytes without pointers: what the
//     built-in executors write while they run, and what a Log keeps of
//     them (Pack and Packed.Event convert).
//   - A Header is the first line of a trace: the format name and version,
//     the executor, the number of workers, and the model policy (with its
//     parameters) the trace is checked under.
//   - A trace is a Header and its Events. The file form is JSON lines
//     (version 1, described in docs/trace-format.md and
//     traces/schema/trace-v1.schema.json); the text form
//     ("#12 w1 take t3 steal from w0") is for golden files and diffs.
//     Both parse back to the same events.
//   - Format v1.1 is a compatible extension a trace opts into with
//     "minor":1 in its header (Header.Minor): the header's order and
//     unobserved, the config keys spurious-polls and slice-us, the kind
//     stop, the result error, a wake that names no task, and the event
//     fields priority, future and time. Any of them in a trace without
//     "minor":1 is rejected at its line with a message that says to add it.
//     A Packed cannot hold the v1.1 fields (Pack reports false).
//
// Reading and writing stream: a Reader holds one line at a time, so a trace
// of any length is read in bounded memory, and rejects what it does not
// understand with an *Error naming the file, the line and what was
// expected. A Writer validates each event (Validate) so that it never
// writes what its Reader would reject. A Log is the Recorder an executor
// writes into during a run; it takes the built-in executors' events in
// batches of Packed (RecordPacked) and keeps them packed. All hands events
// held in memory (a Log's) to a checker in the form a Reader's All yields
// them from a file.
//
// Pictures of a trace, the HTML timeline and the Chrome trace for
// Perfetto, are drawn by the package traces/picture.
//
// Untrusted text: a trace's strings reach a terminal only through
// Printable; ShellQuote quotes a path in a suggested command; CreateOutput
// and WriteOutput write an output file whole or not at all, never through a
// symbolic link and never onto an input.
//
// Go runtime traces: ReadGoTrace maps an execution trace written by
// runtime/trace onto events (goroutines are tasks, Ps are workers), so that
// the Go scheduler itself can be checked for what such a trace can show
// (GoTraceCannotShow says what it cannot).
//
// Example:
//
//	var log traces.Log
//	ex.SetRecorder(&log)                     // an executor.Reporter
//	... run a workload ...
//	err := traces.WriteFile("run.jsonl", ex.Describe(), log.Events()) // an executor.Describer
//
//	r, err := traces.Open("run.jsonl")
//	defer r.Close()
//	for e, err := range r.All() {
//		if err != nil { return err } // "run.jsonl:7: unknown event kind "yield" ..."
//		fmt.Println(traces.FormatEvent(e))
//	}
package traces
